package cluster

import (
	"errors"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// TestTryAcquireThroughTheLog: a TryAcquire is granted while the slot is
// free, answered the same lease when repeated with its request id, and
// refused once the slot is held, with no waiter queued on any member; the
// members end identical and their checksums agree.
func TestTryAcquireThroughTheLog(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	s, nd := tenant(t, l)
	c := &engine.Call{Session: s.ID, Request: "t1"}
	first, err := l.TryAcquire(c, nd.ID, "gpu", 0)
	if err != nil {
		t.Fatalf("TryAcquire on a free slot: %v", err)
	}
	again, err := l.TryAcquire(&engine.Call{Session: s.ID, Request: "t1"}, nd.ID, "gpu", 0)
	if err != nil || again != first {
		t.Fatalf("repeat of t1: %+v, %v; want lease %+v", again, err, first)
	}
	if _, err := l.TryAcquire(&engine.Call{Session: s.ID}, nd.ID, "gpu", 0); !errors.Is(err, engine.ErrNoSlot) {
		t.Fatalf("TryAcquire on a held slot: %v, want ErrNoSlot", err)
	}
	if err := l.CompareChecksums(); err != nil {
		t.Fatal(err)
	}
	if !tc.converged() {
		t.Fatal("the members differ after TryAcquire commands")
	}
	for _, n := range tc.liveNodes() {
		if got := n.fsm.Engine().Stats().Waiting["gpu"]; got != 0 || n.fsm.keptWaiters() != 0 {
			t.Fatalf("member %s: %d acquires waiting, %d waiters kept after a refused TryAcquire", n.cfg.ID, got, n.fsm.keptWaiters())
		}
		if m := n.fsm.Mismatches(); len(m) != 0 {
			t.Fatalf("member %s found its checksum differ: %v", n.cfg.ID, m)
		}
	}
}
