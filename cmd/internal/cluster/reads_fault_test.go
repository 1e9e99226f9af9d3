package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// TestPartitionedLeaderRefusesStaleRead cuts off a leader whose lease is
// long (10 s: a 4 s lease ran out once in some hundred runs under -race on
// a loaded machine, before the majority had elected and written) from
// followers that elect a new leader within a second or two,
// and reads on it once the new leader has acknowledged a write: the old
// leader still believes it leads and its replica misses the write, so only
// its leadership check (VerifyLeader) keeps it from answering the read.
// The read must be refused.
func TestPartitionedLeaderRefusesStaleRead(t *testing.T) {
	c := openFaultCluster(t, 1, func(i int, cfg *Config) {
		rc := testRaftConfig()
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = time.Second, time.Second, 500*time.Millisecond
		if i == 0 {
			rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = 10*time.Second, 10*time.Second, 10*time.Second
			cfg.LeaderWait = 100 * time.Millisecond
		}
		cfg.Raft = rc
	})
	old := c.nodes[0]
	for c.leader() < 0 {
		time.Sleep(10 * time.Millisecond) // waiting for the first election
	}
	if l := c.nodes[c.leader()]; l != old {
		if _, err := l.TransferLeadership(old.cfg.ID); err != nil {
			t.Fatal(err)
		}
	}
	s, err := old.OpenSession(&engine.Call{}, engine.RootID, time.Hour, [32]byte{3})
	if err != nil {
		t.Fatal(err)
	}
	nd, err := old.Create(&engine.Call{Session: s.ID}, engine.RootID, engine.Spec{Name: "q", Quotas: map[string]int64{"tokens": 100}})
	if err != nil {
		t.Fatal(err)
	}
	if got := used(t, old, nd.ID); got != 0 { // the old leader's reads of its term are ready
		t.Fatalf("a new quota reads %d used", got)
	}
	if err := c.net.Isolate(c.addrs[0]); err != nil {
		t.Fatal(err)
	}
	newer := c.nodes[1+acknowledgeOnMajority(t, c.nodes[1:], s.ID, nd.ID)]
	if newer.raft.CurrentTerm() <= old.raft.CurrentTerm() {
		t.Fatal("the write was not taken by a newer leader")
	}
	if old.raft.State() != raft.Leader {
		t.Fatal("the old leader stepped down before the read: its lease ran out before the others elected a leader and took a write; the timeouts are too tight for this machine")
	}
	info, _, _, err := old.Describe(&engine.Call{}, nd.ID, nil)
	var nl *ErrNotLeader
	if !errors.As(err, &nl) {
		t.Fatalf("the cut-off old leader answered a read with %d tokens used (err %v); the new leader acknowledged 1: want ErrNotLeader", info.Quotas["tokens"].Used, err)
	}
}

// acknowledgeOnMajority charges one token on whichever of nodes leads,
// until one acknowledges it, and returns that member's index in nodes.
func acknowledgeOnMajority(t *testing.T, nodes []*Node, session, id engine.ID) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for i, n := range nodes {
			if n.raft.State() == raft.Leader && n.Consume(&engine.Call{Session: session, Request: "w"}, id, "tokens", 1) == nil {
				return i
			}
		}
		time.Sleep(10 * time.Millisecond) // waiting for the majority's election
	}
	t.Fatal("the majority acknowledged no write within 30 s")
	return 0
}

// TestReadRefusedWhenTermChanges moves the leadership away and back while
// a read runs on the leader: its leadership check then succeeds (it leads
// again), but in a later term, in which another leader may have committed
// what its read missed. What the first run read must not be the answer;
// the read is held and run again in the new term.
func TestReadRefusedWhenTermChanges(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	other := tc.follower()
	runs := 0
	got, err := read(l, func(*engine.Engine) (int, error) {
		runs++
		if runs == 1 {
			if _, err := l.TransferLeadership(other.cfg.ID); err != nil {
				t.Error(err)
			}
			for other.raft.State() != raft.Leader {
				tc.waitChange()
			}
			if _, err := other.TransferLeadership(l.cfg.ID); err != nil {
				t.Error(err)
			}
			for l.raft.State() != raft.Leader {
				tc.waitChange()
			}
		}
		return runs, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got == 1 {
		t.Fatal("a read whose term changed while it ran was answered with what it read")
	}
}
