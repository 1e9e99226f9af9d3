package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// TestFollowerHoldsCallsUntilANewLeader crashes the leader and calls a
// follower once it has not heard from the leader for a quarter of a
// heartbeat timeout, before it times out and starts an election: the call
// must be held until the survivors elect a leader, and then taken (the
// follower won) or refused naming the new leader; never refused naming
// the dead leader, or none. AwaitLeader, which governord's gate uses, must
// answer the same.
func TestFollowerHoldsCallsUntilANewLeader(t *testing.T) {
	tc := newCluster(t, 3, func(c *Config) { c.LeaderWait = 30 * time.Second })
	l, li := tc.leaderIndex()
	s, nd := tenant(t, l)
	f := tc.follower()
	dead := tc.api[serverID(li)]
	tc.kill(li)
	for time.Since(f.raft.LastContact()) <= f.silent {
		time.Sleep(time.Millisecond) // waiting for the follower to miss the dead leader, not for a result
	}
	check := func(what string, err error) {
		t.Helper()
		var nl *ErrNotLeader
		if err != nil && (!errors.As(err, &nl) || nl.Leader == dead || nl.Leader == "") {
			t.Fatalf("%s on a follower right after the leader crashed: %v; want it held until a new leader names itself", what, err)
		}
	}
	check("consume", f.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1))
	check("await leader", f.AwaitLeader(context.Background()))
}

// TestTransferLeadershipRefusesBadTargets: a transfer to a member that is
// not another voter fails and moves nothing, and a follower cannot start
// one.
func TestTransferLeadershipRefusesBadTargets(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	for _, to := range []string{"n9", string(l.cfg.ID)} {
		if _, err := l.TransferLeadership(raft.ServerID(to)); !errors.Is(err, ErrMembership) {
			t.Fatalf("a transfer to %q: %v, want a refusal naming it", to, err)
		}
	}
	if tc.leader() != l {
		t.Fatal("a refused transfer moved the leadership")
	}
	var nl *ErrNotLeader
	if _, err := tc.follower().TransferLeadership(""); !errors.As(err, &nl) {
		t.Fatalf("a transfer started on a follower: %v, want ErrNotLeader", err)
	}
}

// TestAwaitLeaderEndsWithItsContext asks a member that was never added to
// a cluster, so it knows no leader and never will, to wait for one with a
// LeaderWait of an hour: a canceled context must end the wait at once,
// with *ErrNotLeader naming no leader.
func TestAwaitLeaderEndsWithItsContext(t *testing.T) {
	_, tr := raft.NewInmemTransport("")
	n, err := Open(Config{ID: "alone", Transport: tr, Raft: testRaftConfig(), LeaderWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n.Shutdown() }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() { done <- n.AwaitLeader(ctx) }()
	select {
	case err := <-done:
		var nl *ErrNotLeader
		if !errors.As(err, &nl) || nl.Leader != "" {
			t.Fatalf("AwaitLeader with a canceled context answered %v, want *ErrNotLeader naming no leader", err)
		}
	case <-time.After(30 * time.Second): // a bound for a broken wait, not a measurement
		t.Fatal("AwaitLeader kept waiting for a leader after its context was canceled")
	}
}
