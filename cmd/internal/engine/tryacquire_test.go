package engine

import (
	"errors"
	"testing"
)

// noSlot checks that a TryAcquire was refused for want of a slot, and that
// the refusal changed nothing and recorded nothing.
func (f *fixture) noSlot(sess, id ID, class, req string) {
	f.t.Helper()
	before, seq := f.e.Dump(), f.e.Seq()
	if l, err := f.e.TryAcquire(&Call{Session: sess, Request: req}, id, class, 0); !errors.Is(err, ErrNoSlot) {
		f.t.Fatalf("TryAcquire %s on %d: got lease %d, %v; want ErrNoSlot", class, id, l.ID, err)
	}
	sameState(f.t, f.e, before)
	if f.e.Seq() != seq {
		f.t.Fatalf("a refused TryAcquire recorded events %d to %d", seq+1, f.e.Seq())
	}
}

// TestTryAcquireGrantsOrRefusesInOneStep: a slot that fits is granted; a
// full chain is refused with no waiter queued, nothing recorded, and the
// slot freed later goes to the waiter that was already queued.
func TestTryAcquireGrantsOrRefusesInOneStep(t *testing.T) {
	f := newFixture(t)
	tn := f.tenant(Spec{Name: "t", Limits: map[string]int64{"db": 1}})
	a, b := f.session(tn, 0), f.session(tn, 0)
	l, err := f.e.TryAcquire(&Call{Session: a}, tn, "db", 0)
	must(t, err)
	if f.held(tn, "db") != 1 || l.Session != a {
		t.Fatalf("TryAcquire on a free slot: lease %+v, %d held", l, f.held(tn, "db"))
	}
	f.noSlot(b, tn, "db", "")
	w := f.queue(b, tn, "db")
	f.noSlot(a, tn, "db", "")
	f.release(a, l.ID)
	if g := mustGrant(t, w); g.Session != b {
		t.Fatalf("the freed slot went to session %d, want the queued %d", g.Session, b)
	}
}

// TestTryAcquireDoesNotJumpTheQueue: while an acquire waits for a full
// chain, a TryAcquire on that chain is refused and the waiter stays first;
// one on a chain that has a free slot is granted, as an Acquire would be.
func TestTryAcquireDoesNotJumpTheQueue(t *testing.T) {
	f := newFixture(t)
	tn := f.tenant(Spec{Name: "t", Limits: map[string]int64{"db": 3}})
	full := f.sysCreate(tn, Spec{Name: "full", Limits: map[string]int64{"db": 1}})
	free := f.sysCreate(tn, Spec{Name: "free"})
	a, b := f.session(tn, 0), f.session(tn, 0)
	held := f.grant(a, full, "db")
	w := f.queue(b, full, "db")
	f.noSlot(a, full, "db", "")
	if _, err := f.e.TryAcquire(&Call{Session: a}, free, "db", 0); err != nil {
		t.Fatalf("TryAcquire on a chain with a free slot while another waits: %v", err)
	}
	mustWait(t, w)
	f.release(a, held.ID)
	mustGrant(t, w)
}

// TestTryAcquireRequestIDs: a repeat answers the remembered lease without a
// second grant; an id whose Acquire waits is refused and the waiter kept;
// an id reused with other arguments is ErrRequestMismatch.
func TestTryAcquireRequestIDs(t *testing.T) {
	f := newFixture(t)
	tn := f.tenant(Spec{Name: "t", Limits: map[string]int64{"db": 1}})
	a, b := f.session(tn, 0), f.session(tn, 0)
	first, err := f.e.TryAcquire(&Call{Session: a, Request: "r1"}, tn, "db", 0)
	must(t, err)
	seq := f.e.Seq()
	again, err := f.e.TryAcquire(&Call{Session: a, Request: "r1"}, tn, "db", 0)
	if err != nil || again != first || f.e.Seq() != seq {
		t.Fatalf("repeat of r1: %+v, %v, seq %d -> %d; want lease %+v and nothing recorded", again, err, seq, f.e.Seq(), first)
	}
	if _, err := f.e.TryAcquire(&Call{Session: a, Request: "r1"}, tn, "gpu", 0); !errors.Is(err, ErrRequestMismatch) {
		t.Fatalf("r1 reused for another class: %v, want ErrRequestMismatch", err)
	}
	_, w, err := f.e.Acquire(&Call{Session: b, Request: "q1"}, tn, "db", 0)
	if err != nil || w == nil {
		t.Fatalf("Acquire q1 on a full slot: %v, waiter %v; want it queued", err, w)
	}
	f.noSlot(b, tn, "db", "q1")
	f.release(a, first.ID)
	if g := mustGrant(t, w); g.Session != b {
		t.Fatalf("the waiter of q1 got %+v after a TryAcquire with its id", g)
	}
}

// TestTryAcquireIsNotQueued: a TryAcquire on a full chain is refused for
// want of a slot, not by the tenant's bound on queued acquires, even when
// that bound is reached.
func TestTryAcquireIsNotQueued(t *testing.T) {
	f := newBoundFixture(t, roomy(BoundQueued, 1))
	must(t, f.e.SetLimit(&Call{}, f.tight, "db", ptr(1)))
	f.grant(f.ts, f.tight, "db")
	f.noSlot(f.ts, f.tight, "db", "")
	f.queue(f.ts, f.tight, "db")
	f.noSlot(f.ts, f.tight, "db", "")
	if got := f.e.Bounds()[0].Refused[BoundQueued]; got != 0 {
		t.Fatalf("TryAcquire counted %d refusals of queued_acquires", got)
	}
}
