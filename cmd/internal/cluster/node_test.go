package cluster

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
)

// tenant opens a session on the leader and creates a node with a quota of
// 1,000 tokens and one slot of gpu under it.
func tenant(t *testing.T, l *Node) (engine.SessionInfo, engine.NodeInfo) {
	t.Helper()
	s, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Hour, [32]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	nd, err := l.Create(&engine.Call{Session: s.ID}, engine.RootID, engine.Spec{Name: "t",
		Quotas: map[string]int64{"tokens": 1000}, Limits: map[string]int64{"gpu": 1}})
	if err != nil {
		t.Fatal(err)
	}
	return s, nd
}

func used(t testing.TB, n *Node, id engine.ID) int64 {
	t.Helper()
	info, _, _, err := n.Describe(&engine.Call{}, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return info.Quotas["tokens"].Used
}

func TestClusterAppliesOnEveryReplica(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	s, nd := tenant(t, l)
	for range 20 {
		if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 2); err != nil {
			t.Fatal(err)
		}
	}
	if got := used(t, l, nd.ID); got != 40 {
		t.Fatalf("leader reads %d tokens used, want 40", got)
	}
	if !tc.converged() {
		t.Fatal("replicas differ after the same log")
	}
}

func TestFollowerRefusesWithTheLeadersAddress(t *testing.T) {
	tc := newCluster(t, 3, nil)
	_, li := tc.leaderIndex()
	f := tc.follower()
	want := tc.api[serverID(li)]
	for {
		if _, id := f.raft.LeaderWithID(); id != "" {
			break
		}
		tc.waitChange() // the follower learns of the leader from its first append
	}
	check := func(what string, err error) {
		t.Helper()
		var nl *ErrNotLeader
		if !errors.As(err, &nl) || nl.Leader != want {
			t.Fatalf("%s on a follower: got %v, want ErrNotLeader naming %s", what, err, want)
		}
	}
	check("consume", f.Consume(&engine.Call{}, engine.RootID, "tokens", 1))
	_, _, _, err := f.Describe(&engine.Call{}, engine.RootID, nil)
	check("describe", err)
	_, err = f.Validate(&engine.Call{}, 5)
	check("validate", err)
	_, _, err = f.SessionByToken([32]byte{1})
	check("session by token", err)
	_, err = f.Heartbeat(&engine.Call{Session: 3})
	check("heartbeat", err)
}

// transfer hands the leadership to another member and returns the new
// leader.
func (tc *testCluster) transfer() *Node {
	tc.t.Helper()
	old := tc.leader()
	if err := old.raft.LeadershipTransfer().Error(); err != nil {
		tc.t.Fatal(err)
	}
	for {
		if l := tc.leader(); l != old {
			return l
		}
		tc.waitChange()
	}
}

func TestRetryAfterLeaderChangeChargesOnce(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	s, nd := tenant(t, l)
	call := engine.Call{Session: s.ID, Request: "charge-1"}
	first := call
	if err := l.Consume(&first, nd.ID, "tokens", 5); err != nil {
		t.Fatal(err)
	}
	l = tc.transfer()
	again := call
	if err := l.Consume(&again, nd.ID, "tokens", 5); err != nil {
		t.Fatalf("retry on the new leader: %v", err)
	}
	if got := used(t, l, nd.ID); got != 5 {
		t.Fatalf("a retry with the same request id across a leader change left %d tokens used, want 5", got)
	}
}

// TestRetryAfterABusyFailoverChargesOnce retries a charge on a new leader
// after its session made thousands of other charges: the memory of request
// ids keeps the minute (SPEC §9), not only the session's 1,024 most recent.
func TestRetryAfterABusyFailoverChargesOnce(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	s, nd := tenant(t, l)
	const others = 3 * engine.RequestMemory
	charge := func(n *Node, req string) {
		t.Helper()
		if err := n.Consume(&engine.Call{Session: s.ID, Request: req}, nd.ID, "calls", 1); err != nil {
			t.Fatalf("charge %s: %v", req, err)
		}
	}
	charge(l, "first")
	for i := range others {
		charge(l, fmt.Sprint("other-", i))
	}
	l = tc.transfer()
	charge(l, "first")
	info, _, _, err := l.Describe(&engine.Call{}, nd.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Quotas["calls"].Used; got != others+1 {
		t.Fatalf("after %d other charges and a leader change, the retry left %d calls used, want %d", others, got, others+1)
	}
}

// TestReadAfterLeaderCrashSeesAcknowledgedWrites kills the leader right
// after its last acknowledged write, when the followers hold the entry but
// may not know it is committed; the new leader's first read must see it.
func TestReadAfterLeaderCrashSeesAcknowledgedWrites(t *testing.T) {
	for round := range 3 {
		tc := newCluster(t, 3, nil)
		l, li := tc.leaderIndex()
		s, nd := tenant(t, l)
		for range 10 {
			if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1); err != nil {
				t.Fatal(err)
			}
		}
		tc.kill(li)
		if got := used(t, tc.leader(), nd.ID); got != 10 {
			t.Fatalf("round %d: the new leader's first read saw %d tokens used, want the 10 acknowledged", round, got)
		}
	}
}

func TestConcurrentReadsAreServed(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	s, nd := tenant(t, l)
	if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 3); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 32)
	start := make(chan struct{})
	for range 32 {
		go func() {
			<-start
			info, _, _, err := l.Describe(&engine.Call{}, nd.ID, nil)
			if err == nil && info.Quotas["tokens"].Used != 3 {
				err = errors.New("a concurrent read missed an acknowledged write")
			}
			errs <- err
		}()
	}
	close(start)
	for range 32 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestHeartbeatsRenewInOneBatch(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	var ids []engine.ID
	for i := range 8 {
		s, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Minute, [32]byte{byte(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	before := l.raft.LastIndex()
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			s, err := l.Heartbeat(&engine.Call{Session: id})
			if err == nil && s.ID != id {
				err = errors.New("a renewal answered another session")
			}
			errs <- err
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := l.raft.LastIndex() - before; n == 0 || n > uint64(len(ids)) {
		t.Fatalf("%d renewals took %d log entries", len(ids), n)
	}
	if _, err := l.Heartbeat(&engine.Call{Session: 999}); !errors.Is(err, engine.ErrSessionEnded) {
		t.Fatalf("renewing an unknown session: got %v, want ErrSessionEnded", err)
	}
}

func TestWaiterSurvivesFailover(t *testing.T) {
	tc := newCluster(t, 3, nil)
	_, held, b, w := holdAndQueue(t, tc.leader(), "")
	nl := tc.transfer()
	if _, err := nl.Release(&engine.Call{Session: held.Session}, held.ID, engine.Report{}); err != nil {
		t.Fatal(err)
	}
	g := awaitGrant(t, w, b.ID)
	info, err := nl.Validate(&engine.Call{Session: b.ID}, g.Lease.ID)
	if err != nil || info.Session != b.ID {
		t.Fatalf("the new leader does not know the grant: %+v, %v", info, err)
	}
	if !tc.converged() {
		t.Fatal("replicas differ after the grant")
	}
}

func TestAbandonWithdrawsTheWaiterEverywhere(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	_, held, b, w := holdAndQueue(t, l, "")
	if err := l.Abandon(&engine.Call{Session: b.ID}, w); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Release(&engine.Call{Session: held.Session}, held.ID, engine.Report{}); err != nil {
		t.Fatal(err)
	}
	if !tc.converged() {
		t.Fatal("replicas differ after an abandon")
	}
	for _, n := range tc.liveNodes() {
		if st := n.fsm.Engine().Stats(); st.Leases != 0 {
			t.Fatalf("member %s holds %d leases after the waiter was abandoned and the slot freed", n.cfg.ID, st.Leases)
		}
	}
}

func TestTimersFireAsCommands(t *testing.T) {
	tc := newCluster(t, 3, func(c *Config) { c.ReapEvery = 20 * time.Millisecond })
	l := tc.leader()
	s, err := l.OpenSession(&engine.Call{}, engine.RootID, 200*time.Millisecond, [32]byte{3})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range tc.liveNodes() {
		for {
			if _, found := n.fsm.Engine().SessionByToken([32]byte{3}); !found {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session %d never lapsed on member %s without a call", s.ID, n.cfg.ID)
			}
			time.Sleep(5 * time.Millisecond) // waiting for the leader's next Reap, not for a result
		}
	}
}

func TestNewMemberJoinsBySnapshot(t *testing.T) {
	tc := newCluster(t, 3, func(c *Config) {
		c.Raft.SnapshotThreshold = 64
		c.Raft.TrailingLogs = 16
	})
	l := tc.leader()
	s, nd := tenant(t, l)
	for range 200 {
		if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	joined := tc.add()
	if !tc.converged() {
		t.Fatal("the member that joined by snapshot differs from the others")
	}
	if joined.raft.Stats()["last_snapshot_index"] == "0" {
		t.Fatal("the new member caught up from the log, not from a snapshot")
	}
	if got := used(t, l, nd.ID); got != 200 {
		t.Fatalf("used %d, want 200", got)
	}
}

func TestNonDeterministicApplyIsReported(t *testing.T) {
	tc := newCluster(t, 3, nil)
	f := tc.follower()
	f.fsm.timeOf = func(*Command, int64) int64 { return time.Now().UnixNano() } // reads the wall clock inside Apply, on purpose
	l := tc.leader()
	if _, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Minute, [32]byte{5}); err != nil {
		t.Fatal(err)
	}
	if err := l.CompareChecksums(); err != nil {
		t.Fatal(err)
	}
	tc.onlyMismatch(f)
}

// TestMemberTableMismatchIsReported gives one follower, once the replicas
// agree, an API address for itself that the log never recorded: the
// checksum covers the member table, so that follower, and no other member,
// reports a mismatch.
func TestMemberTableMismatchIsReported(t *testing.T) {
	tc := newCluster(t, 3, nil)
	if !tc.converged() {
		t.Fatal("replicas differ after the same log")
	}
	f := tc.follower()
	f.fsm.setMember(f.cfg.ID, "127.0.0.1:7990") // outside the log, on purpose
	if err := tc.leader().CompareChecksums(); err != nil {
		t.Fatal(err)
	}
	tc.onlyMismatch(f)
}

// TestNewLeaderGivesSessionsAGrace lets the leaders' clock run past a
// session's TTL with no heartbeat, as during an election, then changes the
// leader: the session's next heartbeat must find it alive.
func TestNewLeaderGivesSessionsAGrace(t *testing.T) {
	clk := testclock.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	tc := newCluster(t, 3, func(c *Config) { c.Wall = clk.Now })
	l := tc.leader()
	s, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Second, [32]byte{4})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second)
	l = tc.transfer()
	if _, err := l.Heartbeat(&engine.Call{Session: s.ID}); err != nil {
		t.Fatalf("the first heartbeat after a leader change: %v", err)
	}
	clk.Advance(5 * time.Second)
	if _, err := l.Heartbeat(&engine.Call{Session: s.ID}); !errors.Is(err, engine.ErrSessionEnded) {
		t.Fatalf("a heartbeat after the grace and a TTL passed: got %v, want ErrSessionEnded", err)
	}
}

// TestUnknownOutcomeRetriesChargeOnce cuts the leader off while a charge is
// in its log but not committed: the caller learns ErrUnknownOutcome, and its
// retry with the same request id on the new leader charges exactly once.
func TestUnknownOutcomeRetriesChargeOnce(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l, li := tc.leaderIndex()
	s, nd := tenant(t, l)
	tc.isolate(li)
	call := engine.Call{Session: s.ID, Request: "charge-1"}
	first := call
	err := l.Consume(&first, nd.ID, "tokens", 5)
	var nl *ErrNotLeader
	if !errors.Is(err, ErrUnknownOutcome) && !errors.As(err, &nl) {
		t.Fatalf("a charge on a leader cut off from the rest: got %v, want ErrUnknownOutcome or ErrNotLeader", err)
	}
	tc.connect()
	nl2 := tc.leader()
	retry := call
	if err := nl2.Consume(&retry, nd.ID, "tokens", 5); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if got := used(t, nl2, nd.ID); got != 5 {
		t.Fatalf("a charge and its retry left %d tokens used, want 5", got)
	}
	if !tc.converged() {
		t.Fatal("replicas differ after the old leader rejoined")
	}
}

// TestLeaderComparesChecksumsOnItsOwn lets the leader's duties put the
// checksum pair in the log every few entries: the replica that reads the
// wall clock in Apply is found without anyone asking.
func TestLeaderComparesChecksumsOnItsOwn(t *testing.T) {
	tc := newCluster(t, 3, func(c *Config) { c.ReapEvery, c.CheckEvery = 20*time.Millisecond, 4 })
	f := tc.follower()
	f.fsm.timeOf = func(*Command, int64) int64 { return time.Now().UnixNano() } // reads the wall clock inside Apply, on purpose
	if _, err := tc.leader().OpenSession(&engine.Call{}, engine.RootID, time.Minute, [32]byte{5}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(f.fsm.Mismatches()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no mismatch reported within 30 s")
		}
		time.Sleep(5 * time.Millisecond) // waiting for the leader's next check, not for a result
	}
}

// TestEveryHeartbeatIsAnsweredUnderLoad renews 32 sessions 20 times each
// at once: every renewal is answered for its own session, in fewer log
// entries than renewals.
func TestEveryHeartbeatIsAnsweredUnderLoad(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	var ids []engine.ID
	for i := range 32 {
		s, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Minute, [32]byte{byte(i + 1), 9})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	before := l.raft.LastIndex()
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			for range 20 {
				s, err := l.Heartbeat(&engine.Call{Session: id})
				if err == nil && s.ID != id {
					err = errors.New("a renewal answered another session")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := l.raft.LastIndex() - before; n >= 32*20 {
		t.Fatalf("%d renewals took %d log entries", 32*20, n)
	}
}
