package cluster

import (
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// holdAndQueue makes, through leader l, a tenant node of one gpu slot, a
// lease on it, and a second session whose acquire (with request id
// request) waits behind it; it returns the node, the lease, the second
// session and its waiter.
func holdAndQueue(t *testing.T, l *Node, request string) (engine.NodeInfo, engine.LeaseInfo, engine.SessionInfo, *engine.Waiter) {
	t.Helper()
	a, nd := tenant(t, l)
	b, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Hour, [32]byte{8})
	if err != nil {
		t.Fatal(err)
	}
	held, w, err := l.Acquire(&engine.Call{Session: a.ID}, nd.ID, "gpu", 0)
	if err != nil || w != nil {
		t.Fatalf("first acquire: %v, waiter %v", err, w)
	}
	_, w, err = l.Acquire(&engine.Call{Session: b.ID, Request: request}, nd.ID, "gpu", time.Hour)
	if err != nil || w == nil {
		t.Fatalf("second acquire should queue: %v, waiter %v", err, w)
	}
	return nd, held, b, w
}

// queuedBehind is holdAndQueue on the leader with request id "q1", and
// then has the leader snapshot its log away with the acquire still queued.
func queuedBehind(t *testing.T, tc *testCluster) (engine.NodeInfo, engine.LeaseInfo, engine.SessionInfo, *engine.Waiter) {
	t.Helper()
	l := tc.leader()
	nd, held, b, w := holdAndQueue(t, l, "q1")
	for range 100 {
		if err := l.Consume(&engine.Call{Session: held.Session}, nd.ID, "tokens", 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot with an acquire queued: %v", err)
	}
	return nd, held, b, w
}

func snapTune(c *Config) {
	c.Raft.SnapshotThreshold = 64
	c.Raft.TrailingLogs = 16
}

// TestMemberJoinsBySnapshotWhileAcquiresWait: a member that joins from a
// snapshot taken while an acquire waits has it queued too, and grants it
// when the slot frees, as the others do.
func TestMemberJoinsBySnapshotWhileAcquiresWait(t *testing.T) {
	tc := newCluster(t, 3, snapTune)
	nd, held, b, w := queuedBehind(t, tc)
	joined := tc.add()
	if !tc.converged() {
		t.Fatal("the member that joined by snapshot differs from the others")
	}
	if joined.raft.Stats()["last_snapshot_index"] == "0" {
		t.Fatal("the new member caught up from the log, not from a snapshot")
	}
	if n := queuedNow(joined.fsm.Engine()); n != 1 {
		t.Fatalf("the member that joined has %d acquires queued, want 1", n)
	}
	l := tc.leader()
	if _, err := l.Release(&engine.Call{Session: held.Session}, held.ID, engine.Report{}); err != nil {
		t.Fatal(err)
	}
	g := awaitGrant(t, w, b.ID)
	if g.Lease.Node != nd.ID {
		t.Fatalf("grant on node %d, want %d", g.Lease.Node, nd.ID)
	}
	if !tc.converged() {
		t.Fatal("the members differ after the queued acquire was granted")
	}
	if _, err := joined.fsm.Engine().Validate(&engine.Call{Session: b.ID}, g.Lease.ID); err != nil {
		t.Fatalf("the member that joined does not hold the grant: %v", err)
	}
}

// TestWaiterReattachedAfterSnapshotAndFailover: the acquire queued at the
// snapshot reaches a member only through it; that member becomes the
// leader, the client retries its acquire there with its request id and
// finds its place in the queue (not a second one), and the grant comes to
// it when the slot frees.
func TestWaiterReattachedAfterSnapshotAndFailover(t *testing.T) {
	tc := newCluster(t, 3, snapTune)
	nd, held, b, _ := queuedBehind(t, tc)
	joined := tc.add()
	i := len(tc.nodes) - 1
	for deadline := time.Now().Add(30 * time.Second); tc.leader() != joined; tc.waitChange() {
		err := tc.leader().raft.LeadershipTransferToServer(serverID(i), tc.trans[i].LocalAddr()).Error()
		if err != nil && time.Now().After(deadline) {
			t.Fatalf("the leadership never moved to the member that joined: %v", err)
		}
	}
	_, w, err := joined.Acquire(&engine.Call{Session: b.ID, Request: "q1"}, nd.ID, "gpu", time.Hour)
	if err != nil || w == nil {
		t.Fatalf("the retried acquire on the new leader: %v, waiter %v; want its waiter", err, w)
	}
	if n := queuedNow(joined.fsm.Engine()); n != 1 {
		t.Fatalf("%d acquires wait after the retry, want 1", n)
	}
	if _, err := joined.Release(&engine.Call{Session: held.Session}, held.ID, engine.Report{}); err != nil {
		t.Fatal(err)
	}
	awaitGrant(t, w, b.ID)
	if st := joined.fsm.Engine().Stats(); st.Leases != 1 || queuedNow(joined.fsm.Engine()) != 0 {
		t.Fatalf("after the grant: %d leases, %d queued; want 1 and 0", st.Leases, queuedNow(joined.fsm.Engine()))
	}
	if !tc.converged() {
		t.Fatal("the members differ after the grant")
	}
}

// awaitGrant waits up to 30 s for w's grant and checks that it went to
// session, as a lease.
func awaitGrant(t *testing.T, w *engine.Waiter, session engine.ID) engine.Grant {
	t.Helper()
	var g engine.Grant
	select {
	case g = <-w.C():
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter got no grant within 30 s")
	}
	if g.Err != nil || g.Lease.Session != session {
		t.Fatalf("grant: %+v, want a lease of session %d", g, session)
	}
	return g
}
