package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// steppedWorld is a tenant (db limit 3) with a node p past whose deadline
// the test moves the clock: p has 12 children c0..c11, c0 has 3 children,
// and steps of ending look at 4 nodes. Leases are held on c5, on c0's first
// child and on q, p's sibling; the tenant's limit is full, so an acquire on
// c9 waits.
type steppedWorld struct {
	f        *fixture
	s        ID
	p, q     ID
	kids     []ID
	grand    []ID
	onC5     LeaseInfo
	onGrand  LeaseInfo
	onQ      LeaseInfo
	waiter   *Waiter
	deadline time.Time
}

func newSteppedWorld(t *testing.T) *steppedWorld {
	f := newFixture(t)
	f.e.endStep = 4
	w := &steppedWorld{f: f, deadline: f.clock.Now().Add(time.Second)}
	tenant := f.tenant(Spec{Name: "t", Limits: map[string]int64{"db": 3}})
	w.s = f.session(tenant, time.Hour)
	w.p = f.create(w.s, 0, Spec{Name: "p", Deadline: w.deadline.UnixNano()})
	w.q = f.create(w.s, 0, Spec{Name: "q"})
	for i := range 12 {
		w.kids = append(w.kids, f.create(w.s, w.p, Spec{Name: fmt.Sprint("c", i)}))
	}
	for i := range 3 {
		w.grand = append(w.grand, f.create(w.s, w.kids[0], Spec{Name: fmt.Sprint("g", i)}))
	}
	w.onC5 = f.grant(w.s, w.kids[5], "db")
	w.onGrand = f.grant(w.s, w.grand[0], "db")
	w.onQ = f.grant(w.s, w.q, "db")
	w.waiter = f.queue(w.s, w.kids[9], "db")
	return w
}

// TestWideSubtreeEndsInSteps checks what a subtree being ended in steps
// looks like between two steps: every node of it already answers as ended
// (describe gives the state and instant its step will give it; create,
// consume, acquire and a session scoped to it are refused); a queued acquire
// on it that a freed slot would fit fails instead of being granted; the
// invariants hold; a restart in the middle finishes the same way; and once
// Reap has taken the steps, every node has ended with its leases.
func TestWideSubtreeEndsInSteps(t *testing.T) {
	w := newSteppedWorld(t)
	f := w.f
	f.clock.Advance(2 * time.Second)
	last := w.kids[11]
	if err := f.e.Consume(&Call{Session: w.s}, last, "http", 1); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("consume under a passed deadline: %v; want ErrNodeEnded", err)
	}
	ended := f.describe(w.p).Ended
	if n := f.e.nodes[last]; n.state != Active {
		t.Fatalf("c11 ended in the first step; the test wants it still to come")
	}
	if got := f.describe(last); got.State != DeadlineExceeded || got.Ended != ended {
		t.Fatalf("c11 between steps: %v at %d; want deadline_exceeded at %d", got.State, got.Ended, ended)
	}
	if _, err := f.e.Create(&Call{Session: w.s}, last, Spec{Name: "x"}); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("create under c11: %v; want ErrNodeEnded", err)
	}
	if _, _, err := f.e.Acquire(&Call{Session: w.s}, last, "db", 0); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("acquire on c11: %v; want ErrNodeEnded", err)
	}
	if _, err := f.e.OpenSession(f.sys(), last, time.Hour, token(99)); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("a session scoped to c11: %v; want ErrNodeEnded", err)
	}
	must(t, checkState(f.e))
	mid := f.e.Dump()

	f.release(w.s, w.onQ.ID) // a slot frees: the waiter on c9 fits, but c9 is being ended
	select {
	case g := <-w.waiter.C():
		if !errors.Is(g.Err, ErrNodeEnded) {
			t.Fatalf("the waiter on c9: lease %d, %v; want ErrNodeEnded", g.Lease.ID, g.Err)
		}
	default:
		t.Fatal("the waiter on c9 is still queued once a slot it fits freed")
	}
	must(t, checkState(f.e))

	f.e.Reap(f.sys())
	wantEnded(t, f.e, w, ended)
	if f.e.leases[w.onC5.ID] != nil || f.e.leases[w.onGrand.ID] != nil {
		t.Fatal("a lease beneath p outlived the steps")
	}
	must(t, checkState(f.e))

	r, err := Restore(Options{Clock: f.clock, Sink: &recorder{}}, mid)
	must(t, err)
	r.endStep = 4
	must(t, checkState(r))
	r.Reap(f.sys())
	wantEnded(t, r, w, ended)
	must(t, checkState(r))
}

// wantEnded fails unless every node beneath p has ended as past its
// deadline at p's instant.
func wantEnded(t *testing.T, e *Engine, w *steppedWorld, at int64) {
	t.Helper()
	for _, id := range append(append([]ID{}, w.kids...), w.grand...) {
		n := e.nodes[id]
		if n.state != DeadlineExceeded || n.ended != at {
			t.Fatalf("node %d: %v at %d; want deadline_exceeded at %d", id, n.state, n.ended, at)
		}
	}
	if len(e.ending) != 0 {
		t.Fatalf("%d subtrees are still being ended", len(e.ending))
	}
}

// TestCancelTakesEveryStep checks that a cancel of a wide subtree answers
// once every node of it has ended, in steps of at most endStep nodes each
// (the node itself first, in a KindNodeEnding event), and that replaying
// the events gives the live engine.
func TestCancelTakesEveryStep(t *testing.T) {
	w := newSteppedWorld(t)
	f := w.f
	from := len(f.rec.events)
	must(t, f.e.Cancel(&Call{Session: w.s}, w.p))
	evs := f.rec.events[from:]
	if evs[0].Kind != KindNodeEnding || evs[0].Node != w.p {
		t.Fatalf("the first event is %s on %d; want node_ending on p", evs[0].Kind, evs[0].Node)
	}
	steps := 0
	for _, ev := range evs[1:] {
		if ev.Kind != KindNodesEnded {
			continue
		}
		steps++
		if len(ev.IDs) > 4 {
			t.Fatalf("a step ended %d nodes; want at most 4", len(ev.IDs))
		}
	}
	if steps < 4 {
		t.Fatalf("15 nodes ended in %d steps; want at least 4", steps)
	}
	for _, id := range append(append([]ID{}, w.kids...), w.grand...) {
		if st := f.e.nodes[id].state; st != Cancelled {
			t.Fatalf("node %d is %v once cancel answered; want cancelled", id, st)
		}
	}
	must(t, checkState(f.e))
	replayed := New(Options{Clock: newFakeClock()})
	for _, ev := range f.rec.events {
		must(t, replayed.Replay(ev))
	}
	now := f.clock.Now().UnixNano()
	if got, want := visible(replayed.Dump(), now), visible(f.e.Dump(), now); !equalSnapshots(got, want) {
		t.Fatalf("replay differs from the live engine:\n%s", diffSnapshots(got, want))
	}
}

// TestNarrowSubtreeEndsInOneEvent checks that a subtree narrower than a step
// still ends in one KindNodeEnded event.
func TestNarrowSubtreeEndsInOneEvent(t *testing.T) {
	f := newFixture(t)
	tenant := f.tenant(Spec{Name: "t"})
	p := f.create(0, tenant, Spec{Name: "p"})
	f.create(0, p, Spec{Name: "c"})
	from := len(f.rec.events)
	must(t, f.e.Cancel(f.sys(), p))
	if evs := f.rec.events[from:]; len(evs) != 1 || evs[0].Kind != KindNodeEnded {
		t.Fatalf("cancelling two nodes emitted %d events, the first %s; want one node_ended", len(evs), evs[0].Kind)
	}
}

// TestOwnerEndsBeforeTheStepReachesItsNode: the session that made the nodes
// beneath p closes between two steps of p's ending. The nodes still to come
// are left to the steps, active with an owner that has ended; a snapshot
// taken then loads, and the steps end them as they would have.
func TestOwnerEndsBeforeTheStepReachesItsNode(t *testing.T) {
	w := newSteppedWorld(t)
	f := w.f
	f.clock.Advance(2 * time.Second)
	ended := f.describe(w.p).Ended
	if f.e.nodes[w.kids[11]].state != Active {
		t.Fatal("c11 ended in the first step; the test wants it still to come")
	}
	must(t, f.e.CloseSession(&Call{Session: w.s}))
	if n := f.e.nodes[w.kids[11]]; n.state != Active || f.e.sessions[n.owner] != nil {
		t.Fatalf("c11 after its owner closed: %v, owner %d still open: %v; want active under a closed owner", n.state, n.owner, f.e.sessions[n.owner] != nil)
	}
	must(t, checkState(f.e))
	r, err := Restore(Options{Clock: f.clock, Sink: &recorder{}}, f.e.Dump())
	must(t, err)
	r.endStep = 4
	must(t, checkState(r))
	for _, e := range []*Engine{f.e, r} {
		e.Reap(f.sys())
		wantEnded(t, e, w, ended)
		must(t, checkState(e))
	}
}
