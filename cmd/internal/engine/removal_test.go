package engine

import (
	"fmt"
	"testing"
	"time"
)

// wideEnded is an ended subtree of 100,000 nodes past its retention: p,
// its children, and 300 grandchildren under its first child, with 2 units of
// http charged beneath p.
type wideEnded struct {
	f      *fixture
	tenant ID
	p      ID
	ids    []ID // every node of the subtree, p first
}

const wideEndedNodes = 100_000

func newWideEnded(t *testing.T) *wideEnded {
	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	w := &wideEnded{f: f, tenant: f.tenant(Spec{Name: "wide"})}
	s := f.session(w.tenant, time.Hour)
	w.p = f.create(s, 0, Spec{Name: "p"})
	w.ids = append(w.ids, w.p)
	for i := range wideEndedNodes - 301 {
		w.ids = append(w.ids, f.create(s, w.p, Spec{Name: fmt.Sprint("c", i)}))
	}
	for i := range 300 {
		w.ids = append(w.ids, f.create(s, w.ids[1], Spec{Name: fmt.Sprint("g", i)}))
	}
	must(t, f.e.Consume(&Call{Session: s}, w.ids[2], "http", 1))
	must(t, f.e.Consume(&Call{Session: s}, w.ids[len(w.ids)-1], "http", 1))
	must(t, f.e.Cancel(&Call{Session: s}, w.p))
	f.clock.Advance(2 * time.Second)
	return w
}

// removeStep takes one step of removal on e and returns the nodes it
// removed and whether steps may remain.
func removeStep(e *Engine) (int, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	before := len(e.nodes)
	more := e.removeStepLocked(e.nowLocked())
	return before - len(e.nodes), more
}

// wantRemoved fails unless every node of w's subtree is gone from e, the
// tenant still counts the 2 units charged beneath it as used and settled,
// and the invariants hold.
func wantRemoved(t *testing.T, e *Engine, w *wideEnded) {
	t.Helper()
	for _, id := range w.ids {
		if e.nodes[id] != nil {
			t.Fatalf("node %d is still in the tree", id)
		}
	}
	inf, _, _, err := e.Describe(&Call{}, w.tenant, nil)
	must(t, err)
	if q := inf.Quotas["http"]; q.Used != 2 || q.Settled != 2 || inf.Children != 0 {
		t.Fatalf("the tenant after the removal: used %d, settled %d, %d children; want 2, 2 and none", q.Used, q.Settled, inf.Children)
	}
	must(t, checkState(e))
}

// TestWideSubtreeRemovedInSteps checks that an ended subtree of 100,000
// nodes is removed past its retention in steps that each remove at most a
// step's worth of nodes, children before their parent, with the invariants
// holding between steps; and that a restart in the middle of the removal,
// from a snapshot or by replaying the record, finishes it.
func TestWideSubtreeRemovedInSteps(t *testing.T) {
	w := newWideEnded(t)
	f := w.f
	from := len(f.rec.events)
	var mid *Snapshot
	midEvents := 0
	steps, removed := 0, 0
	for more := true; more; steps++ {
		var n int
		n, more = removeStep(f.e)
		removed += n
		if n > f.e.stepSize() {
			t.Fatalf("step %d removed %d nodes; want at most %d", steps, n, f.e.stepSize())
		}
		if steps%80 == 0 {
			must(t, checkState(f.e))
		}
		if steps == 150 {
			mid, midEvents = f.e.Dump(), len(f.rec.events)
		}
	}
	if removed != wideEndedNodes || steps < wideEndedNodes/f.e.stepSize() {
		t.Fatalf("%d nodes removed in %d steps; want %d in at least %d", removed, steps, wideEndedNodes, wideEndedNodes/f.e.stepSize())
	}
	gone := map[ID]bool{}
	for _, ev := range f.rec.events[from:] {
		for _, id := range ev.IDs {
			if n := f.e.nodes[id]; n != nil || gone[id] {
				t.Fatalf("event %d removes node %d twice or not at all", ev.Seq, id)
			}
			gone[id] = true
		}
	}
	wantRemoved(t, f.e, w)

	r, err := Restore(Options{Clock: f.clock, Sink: &recorder{}}, mid)
	must(t, err)
	r.Reap(f.sys())
	wantRemoved(t, r, w)

	replayed := New(Options{Clock: f.clock, Sink: &recorder{}})
	for _, ev := range f.rec.events[:midEvents] {
		must(t, replayed.Replay(ev))
	}
	replayed.Reap(f.sys())
	wantRemoved(t, replayed, w)
}

// TestRemovalStepsKeepInvariants removes a small ended subtree (p with 12
// children, 3 grandchildren under the first) a step of 4 moves at a time,
// checking the invariants after every step.
func TestRemovalStepsKeepInvariants(t *testing.T) {
	w := newSteppedWorld(t)
	f := w.f
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	must(t, f.e.Cancel(&Call{Session: w.s}, w.p))
	f.clock.Advance(2 * time.Second)
	steps := 0
	for more := true; more; steps++ {
		n, m := removeStep(f.e)
		more = m
		if n > 4 {
			t.Fatalf("a step of 4 moves removed %d nodes", n)
		}
		must(t, checkState(f.e))
	}
	if f.e.nodes[w.p] != nil || steps < 4 {
		t.Fatalf("p removed: %v, in %d steps; want removed in at least 4", f.e.nodes[w.p] == nil, steps)
	}
}

// TestSessionScopedInsideKeepsTheNode checks that a live session scoped
// anywhere beneath an ended node keeps it (and the chain down to the scope)
// past its retention, and that the node goes once the session ends.
func TestSessionScopedInsideKeepsTheNode(t *testing.T) {
	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	tenant := f.tenant(Spec{Name: "t"})
	p := f.create(0, tenant, Spec{Name: "p"})
	c := f.create(0, p, Spec{Name: "c"})
	g := f.create(0, c, Spec{Name: "g"})
	other := f.create(0, p, Spec{Name: "other"})
	s := f.session(g, time.Hour)
	must(t, f.e.Cancel(f.sys(), p))
	f.clock.Advance(5 * time.Second)
	f.e.Reap(f.sys())
	for _, id := range []ID{p, c, g, other} {
		if f.e.nodes[id] == nil {
			t.Fatalf("node %d was removed while a session is scoped to g beneath p", id)
		}
	}
	must(t, f.e.CloseSession(&Call{Session: s}))
	f.clock.Advance(5 * time.Second)
	f.e.Reap(f.sys())
	for _, id := range []ID{p, c, g, other} {
		if f.e.nodes[id] != nil {
			t.Fatalf("node %d is still there once the session scoped beneath it closed", id)
		}
	}
	must(t, checkState(f.e))
}

// TestPutOffRemovalsEndReap: with a retention of 0, removal timers that a
// session scoped inside puts off are due again at once. Reap must still
// return, each step that only puts timers off reporting that no step
// remains, and remove the nodes once the session has closed.
func TestPutOffRemovalsEndReap(t *testing.T) {
	f := newFixture(t)
	f.e.endStep = 2
	set := DefaultSettings()
	set.NodeRetention = 0
	must(t, f.e.Configure(f.sys(), set))
	tenant := f.tenant(Spec{Name: "t"})
	var nodes, sessions []ID
	for i := range 3 { // more put-off timers than a step has moves
		p := f.create(0, tenant, Spec{Name: fmt.Sprint("p", i)})
		g := f.create(0, p, Spec{Name: "g"})
		sessions = append(sessions, f.session(g, time.Hour))
		must(t, f.e.Cancel(f.sys(), p))
		nodes = append(nodes, p, g)
	}
	reaped := make(chan struct{})
	go func() {
		f.e.Reap(f.sys())
		close(reaped)
	}()
	select {
	case <-reaped:
	case <-time.After(time.Minute):
		t.Fatal("Reap is still stepping a minute later, over removals a scoped session puts off")
	}
	for _, id := range nodes {
		if f.e.nodes[id] == nil {
			t.Fatalf("node %d was removed while a session is scoped to it or beneath it", id)
		}
	}
	for _, s := range sessions {
		must(t, f.e.CloseSession(&Call{Session: s}))
	}
	f.e.Reap(f.sys())
	for _, id := range nodes {
		if f.e.nodes[id] != nil {
			t.Fatalf("node %d is still there once the session scoped beneath it closed", id)
		}
	}
	must(t, checkState(f.e))
}
