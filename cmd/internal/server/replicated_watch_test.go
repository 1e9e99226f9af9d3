package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// watchWait bounds each cluster watch test, so that a watch that hears
// nothing fails it rather than hanging.
const watchWait = 20 * time.Second

// until receives from s until a message passes want, and says what came
// instead if the stream ends first.
func until(s *usageStream, what string, want func(*governorv1.WatchNodeResponse) bool) error {
	for s.Receive() {
		if want(s.Msg()) {
			return nil
		}
	}
	return fmt.Errorf("the watch ended before %s: %w", what, s.Err())
}

// usedIs passes a usage message of tokens used n.
func usedIs(n int64) func(*governorv1.WatchNodeResponse) bool {
	return func(m *governorv1.WatchNodeResponse) bool {
		return m.Usage != nil && m.Usage.GetResources()["tokens"].GetUsed() == n
	}
}

// watched is a job watched with usage at a member, and the admin
// session's token.
type watched struct {
	at  *member
	tok string
	job uint64
	s   *usageStream
}

// watchJob creates a job with a token quota through lead and opens a usage
// watch of it there, which starts with the job's state.
func watchJob(ctx context.Context, lead *member, name string) (watched, error) {
	tok, err := lead.token()
	if err != nil {
		return watched{}, err
	}
	res, err := lead.client(tok).CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{
		Spec: &governorv1.NodeSpec{Name: name, Quotas: map[string]int64{"tokens": 100}}}))
	if err != nil {
		return watched{}, fmt.Errorf("create on the leader: %w", err)
	}
	job := res.Msg.Node.Id
	s, err := lead.client(tok).WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: job, Usage: true}))
	if err != nil {
		return watched{}, fmt.Errorf("watch on the leader: %w", err)
	}
	if err := until(s, "the job's state", func(m *governorv1.WatchNodeResponse) bool { return seen(m) == name+":ACTIVE" }); err != nil {
		_ = s.Close()
		return watched{}, err
	}
	return watched{lead, tok, job, s}, nil
}

// consume charges n tokens to job through m.
func (m *member) consume(ctx context.Context, tok string, job uint64, n int64) error {
	_, err := m.client(tok).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: n}))
	return err
}

// A watch on a cluster's leader hears of what the log applies: a consume's
// change of use, then the node's end, which ends the stream.
func TestReplicatedWatchOnTheLeader(t *testing.T) {
	ms := newMembers(t)
	steady(t, ms, func(lead *member) (struct{}, error) {
		ctx, cancel := context.WithTimeout(context.Background(), watchWait)
		defer cancel()
		w, err := watchJob(ctx, lead, "job")
		if err != nil {
			return struct{}{}, err
		}
		tok, job, s := w.tok, w.job, w.s
		defer s.Close()
		if err := lead.consume(ctx, tok, job, 5); err != nil {
			return struct{}{}, fmt.Errorf("consume on the leader: %w", err)
		}
		if err := until(s, "5 tokens used", usedIs(5)); err != nil {
			return struct{}{}, err
		}
		if _, err := lead.client(tok).CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: job})); err != nil {
			return struct{}{}, fmt.Errorf("cancel on the leader: %w", err)
		}
		if err := until(s, "the job's end", func(m *governorv1.WatchNodeResponse) bool { return seen(m) == "job:CANCELLED" }); err != nil {
			return struct{}{}, err
		}
		if s.Receive() || s.Err() != nil {
			return struct{}{}, fmt.Errorf("after the job's end: %v, %v; want the stream ended without error", s.Msg(), s.Err())
		}
		return struct{}{}, nil
	})
}

// A member that is not the leader refuses a watch as it refuses every call:
// Unavailable, naming the leader's API address.
func TestReplicatedWatchFollowerNamesTheLeader(t *testing.T) {
	ms := newMembers(t)
	steady(t, ms, func(lead *member) (struct{}, error) {
		ctx, cancel := context.WithTimeout(context.Background(), watchWait)
		defer cancel()
		w, err := watchJob(ctx, lead, "job")
		if err != nil {
			return struct{}{}, err
		}
		tok, job := w.tok, w.job
		_ = w.s.Close()
		for _, m := range ms {
			if m == lead {
				continue
			}
			s, err := m.client(tok).WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: job}))
			if err == nil {
				if s.Receive() {
					err = fmt.Errorf("a follower served the watch: %v", s.Msg())
				} else {
					err = s.Err()
				}
				_ = s.Close()
			}
			if connect.CodeOf(err) != connect.CodeUnavailable || leaderHint(err) != lead.addr {
				return struct{}{}, fmt.Errorf("WatchNode on a follower: got %v (leader header %q), want Unavailable naming %s", err, leaderHint(err), lead.addr)
			}
		}
		return struct{}{}, nil
	})
}

// A planned leadership transfer ends the old leader's watch with
// Unavailable; the same session's watch reopened at the new leader starts
// with the current state and hears what is applied after.
func TestReplicatedWatchMovesWithTheLeader(t *testing.T) {
	ms := newMembers(t)
	ctx, cancel := context.WithTimeout(context.Background(), watchWait)
	defer cancel()
	w := steady(t, ms, func(lead *member) (watched, error) { return watchJob(ctx, lead, "job") })
	tok, job, s := w.tok, w.job, w.s
	defer s.Close()
	old := w.at
	if err := old.node.Raft().LeadershipTransfer().Error(); err != nil {
		t.Fatalf("transfer the leadership: %v", err)
	}
	for s.Receive() {
		if m := s.Msg(); m.Usage == nil || !usedIs(0)(m) {
			t.Fatalf("after the transfer the old leader's watch sent %v, want its end", m)
		}
	}
	if err := s.Err(); connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), "stopped leading") {
		t.Fatalf("the old leader's watch ended with %v, want Unavailable saying it stopped leading", err)
	}
	var lead *member
	eventually(t, "a new leader", func() bool { lead = leaderOf(ms); return lead != nil && lead != old })
	again, err := lead.client(tok).WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: job, Usage: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := until(again, "the job's state", func(m *governorv1.WatchNodeResponse) bool { return seen(m) == "job:ACTIVE" }); err != nil {
		t.Fatal(err)
	}
	if err := lead.consume(ctx, tok, job, 3); err != nil {
		t.Fatalf("consume on the new leader: %v", err)
	}
	if err := until(again, "3 tokens used", usedIs(3)); err != nil {
		t.Fatal(err)
	}
}

// A snapshot that replaces the leader's replica engine (raft's Restore
// here, as an installed snapshot does on a follower) closes the watches,
// and a session opened after it can watch: the server reads the replica's
// engine of the moment, not the one it started with.
func TestReplicatedWatchAfterASnapshotReplacedTheEngine(t *testing.T) {
	ms := newMembers(t)
	steady(t, ms, func(lead *member) (struct{}, error) {
		ctx, cancel := context.WithTimeout(context.Background(), watchWait)
		defer cancel()
		before, err := watchJob(ctx, lead, "before")
		if err != nil {
			return struct{}{}, err
		}
		defer before.s.Close()
		r := lead.node.Raft()
		snap := r.Snapshot()
		if err := snap.Error(); err != nil {
			return struct{}{}, fmt.Errorf("take a snapshot: %w", err)
		}
		meta, rc, err := snap.Open()
		if err != nil {
			return struct{}{}, fmt.Errorf("take a snapshot: %w", err)
		}
		defer rc.Close()
		if err := r.Restore(meta, rc, 0); err != nil {
			return struct{}{}, fmt.Errorf("restore the snapshot: %w", err)
		}
		for before.s.Receive() {
		}
		if err := before.s.Err(); connect.CodeOf(err) != connect.CodeUnavailable {
			return struct{}{}, fmt.Errorf("a watch open across the restore: %w; want it closed with Unavailable", err)
		}
		after, err := watchJob(ctx, lead, "after")
		if err != nil {
			return struct{}{}, fmt.Errorf("after the restore: %w", err)
		}
		defer after.s.Close()
		if err := lead.consume(ctx, after.tok, after.job, 2); err != nil {
			return struct{}{}, fmt.Errorf("consume after the restore: %w", err)
		}
		return struct{}{}, until(after.s, "2 tokens used", usedIs(2))
	})
}
