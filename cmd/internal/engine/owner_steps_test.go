package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// ownerWorld is a tenant whose session s owns 40 nodes, the first of which
// has 3 children of its own, and holds a lease on the last; other, a second
// session, holds a lease on the second node. Steps look at 4 nodes.
type ownerWorld struct {
	f            *fixture
	tenant       ID
	s, other     ID
	owned, grand []ID
	mine, theirs LeaseInfo
}

func newOwnerWorld(t *testing.T, ttl time.Duration) *ownerWorld {
	f := newFixture(t)
	f.e.endStep = 4
	w := &ownerWorld{f: f, tenant: f.tenant(Spec{Name: "t", Limits: map[string]int64{"db": 10}})}
	w.s, w.other = f.session(w.tenant, ttl), f.session(w.tenant, time.Hour)
	for i := range 40 {
		w.owned = append(w.owned, f.create(w.s, 0, Spec{Name: fmt.Sprint("n", i)}))
	}
	for i := range 3 {
		w.grand = append(w.grand, f.create(w.s, w.owned[0], Spec{Name: fmt.Sprint("g", i)}))
	}
	w.mine = f.grant(w.s, w.owned[39], "db")
	w.theirs = f.grant(w.other, w.owned[1], "db")
	return w
}

// TestLapsedSessionMarksItsNodesAndStepsEndThem checks that the decision
// that a session lapsed ends no node under its hold: it marks the session's
// nodes, and every one already answers as ended (describe gives cancelled
// at the lapse's instant for its owner's end, beneath it cancelled with it;
// create, consume, acquire, cancel and a session scoped to it are refused);
// the invariants hold; a lease another session holds on one stays live
// until the step. Each later step ends at most endStep nodes under its hold,
// in id order, and Reap takes them all.
func TestLapsedSessionMarksItsNodesAndStepsEndThem(t *testing.T) {
	w := newOwnerWorld(t, time.Second)
	f := w.f
	f.clock.Advance(2 * time.Second)
	from := len(f.rec.events)
	lapsed := f.clock.Now().UnixNano()
	if got := f.describe(w.owned[5]); got.State != Cancelled || !got.OwnerEnded || got.Ended != lapsed {
		t.Fatalf("a node of the lapsed session: %v at %d, for its owner: %v; want cancelled at %d for its owner's end", got.State, got.Ended, got.OwnerEnded, lapsed)
	}
	if kinds := kindsOf(f.rec.events[from:]); len(kinds) != 1 || kinds[0] != KindSessionExpired {
		t.Fatalf("the call that took the lapse emitted %v; want the session's end alone", kinds)
	}
	if got := f.describe(w.grand[0]); got.State != Cancelled || got.OwnerEnded || got.Ended != lapsed {
		t.Fatalf("a child of a marked node: %v at %d, for its owner: %v; want cancelled at %d with its parent", got.State, got.Ended, got.OwnerEnded, lapsed)
	}
	n := w.owned[7]
	c := &Call{Session: w.other}
	if _, err := f.e.Create(c, n, Spec{Name: "x"}); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("create under a marked node: %v; want ErrNodeEnded", err)
	}
	if err := f.e.Consume(c, n, "http", 1); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("consume on a marked node: %v; want ErrNodeEnded", err)
	}
	if _, _, err := f.e.Acquire(c, w.grand[1], "db", 0); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("acquire beneath a marked node: %v; want ErrNodeEnded", err)
	}
	if err := f.e.Cancel(c, n); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("cancel of a marked node: %v; want ErrNodeEnded", err)
	}
	if _, err := f.e.OpenSession(f.sys(), n, time.Hour, token(77)); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("a session scoped to a marked node: %v; want ErrNodeEnded", err)
	}
	if f.e.nodes[n].state != Active || f.e.leases[w.theirs.ID] == nil || f.e.leases[w.mine.ID] != nil {
		t.Fatal("before any step: want the node active, the other session's lease live and the lapsed session's gone")
	}
	must(t, checkState(f.e))

	var ended []ID
	for more := true; more; {
		f.e.mu.Lock()
		before := len(f.rec.events)
		more = f.e.orphanStepLocked(f.e.nowLocked())
		step := f.rec.events[before:]
		f.e.mu.Unlock()
		for _, ev := range step {
			if ev.Kind == KindNodeEnded || ev.Kind == KindNodeEnding {
				ended = append(ended, ev.Node)
			}
		}
		if len(step) > 4+1 { // 4 ends, and the first step of a wide one's subtree
			t.Fatalf("a step emitted %d events: %v; want at most 4 ends", len(step), kindsOf(step))
		}
		must(t, checkState(f.e))
	}
	if fmt.Sprint(ended) != fmt.Sprint(w.owned) {
		t.Fatalf("the steps ended %v; want the owned nodes in id order, %v", ended, w.owned)
	}
	wantOwnerEnded(t, f.e, w, lapsed)
	if f.e.leases[w.theirs.ID] != nil {
		t.Fatal("the other session's lease on an owned node outlived its step")
	}
}

// wantOwnerEnded fails unless every owned node has ended for its owner's
// end at instant at, and the first one's children with it.
func wantOwnerEnded(t *testing.T, e *Engine, w *ownerWorld, at int64) {
	t.Helper()
	for _, id := range w.owned {
		if n := e.nodes[id]; n.state != Cancelled || !n.ownerEnded || n.ended != at {
			t.Fatalf("owned node %d: %v at %d, for its owner: %v; want cancelled at %d for its owner's end", id, n.state, n.ended, n.ownerEnded, at)
		}
	}
	for _, id := range w.grand {
		if n := e.nodes[id]; n.state != Cancelled || n.ownerEnded || n.ended != at {
			t.Fatalf("node %d beneath: %v at %d, for its owner: %v; want cancelled at %d with its parent", id, n.state, n.ended, n.ownerEnded, at)
		}
	}
}

func kindsOf(evs []*Event) []Kind {
	var out []Kind
	for _, ev := range evs {
		out = append(out, ev.Kind)
	}
	return out
}

// TestCloseSessionEndsItsNodesInSteps checks that a close answers once the
// steps have ended every node the session owned, and that the record, cut
// after any of its events, replays and restores to an engine that answers
// the same and that Reap brings to the same end. Neither the close nor the
// whole record replayed leaves an ended session queued.
func TestCloseSessionEndsItsNodesInSteps(t *testing.T) {
	w := newOwnerWorld(t, time.Hour)
	f := w.f
	from := len(f.rec.events)
	must(t, f.e.CloseSession(&Call{Session: w.s}))
	closed := f.rec.events[from].Time
	wantOwnerEnded(t, f.e, w, closed)
	if len(f.e.ownerEnds)+len(f.e.unlisted) != 0 {
		t.Fatalf("with no capture taken, the steps done leave %d ended sessions queued and %d for a capture; want none", len(f.e.ownerEnds), len(f.e.unlisted))
	}
	must(t, checkState(f.e))
	for cut := from + 1; cut <= len(f.rec.events); cut++ {
		engines := loadedCut(t, f.clock, f.rec.events[:cut])
		if replayed := engines["replayed"]; cut == len(f.rec.events) && len(replayed.orphaned)+len(replayed.ownerEnds)+len(replayed.unlisted) != 0 {
			t.Fatalf("the whole record replayed leaves %d nodes or ended sessions queued for a step or a capture; want none", len(replayed.orphaned)+len(replayed.ownerEnds)+len(replayed.unlisted))
		}
		for how, e := range engines {
			must(t, checkState(e))
			if inf, _, _, err := e.Describe(&Call{}, w.owned[39], nil); err != nil || inf.State != Cancelled || !inf.OwnerEnded || inf.Ended != closed {
				t.Fatalf("%s after event %d: the last owned node answers %+v, %v; want cancelled at %d for its owner's end", how, cut, inf, err, closed)
			}
			e.endStep = 4
			e.Reap(f.sys())
			wantOwnerEnded(t, e, w, closed)
			must(t, checkState(e))
		}
	}
}

// TestAnAncestorsEndEndsAMarkedNodeForItsOwner checks that an end reaching
// a marked node before its step (here its parent's cancel, the parent owned
// by no session) ends it as its owner's end did: cancelled at the owner's
// instant, for its owner's end, its children with it.
func TestAnAncestorsEndEndsAMarkedNodeForItsOwner(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "t"})
	s := f.session(ten, time.Second)
	p := f.sysCreate(ten, Spec{Name: "p"})
	n := f.create(s, p, Spec{Name: "n"})
	g := f.create(s, n, Spec{Name: "g"})
	f.clock.Advance(2 * time.Second)
	lapsed := f.clock.Now().UnixNano()
	f.describe(p) // takes the lapse: n is marked
	f.clock.Advance(time.Second)
	must(t, f.e.Cancel(f.sys(), p))
	for id, owner := range map[ID]bool{n: true, g: false} {
		if m := f.e.nodes[id]; m.state != Cancelled || m.ownerEnded != owner || m.ended != lapsed {
			t.Fatalf("node %d after its ancestor's cancel: %v at %d, for its owner: %v; want cancelled at %d, for its owner %v", id, m.state, m.ended, m.ownerEnded, lapsed, owner)
		}
	}
	if m := f.e.nodes[p]; m.ended != f.clock.Now().UnixNano() || m.ownerEnded {
		t.Fatalf("the cancelled ancestor ended at %d, for an owner: %v; want at its cancel, %d", m.ended, m.ownerEnded, f.clock.Now().UnixNano())
	}
	must(t, checkState(f.e))
	f.e.Reap(f.sys())
	must(t, checkState(f.e))
}
