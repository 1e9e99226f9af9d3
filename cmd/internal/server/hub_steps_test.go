package server

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// keptEvents keeps every event an engine emits.
type keptEvents struct{ evs []*engine.Event }

func (k *keptEvents) Emit(ev *engine.Event) { k.evs = append(k.evs, ev) }

// wideCancel builds a tenant with a node p of 200 children, the first of
// which has grand children of its own, starts a hub from it, registers the
// watcher watch returns on the hub, cancels p and returns the hub, the
// ids and the events of the cancel: a node_ending and its steps.
func wideCancel(t *testing.T, grand int, watch func(tenant, p, first engine.ID) *watcher) (*hub, *watcher, engine.ID, []engine.ID, []*engine.Event) {
	t.Helper()
	kept := &keptEvents{}
	e := engine.New(engine.Options{Clock: testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Sink: kept})
	tenant, err := e.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Create(&engine.Call{}, tenant.ID, engine.Spec{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var kids []engine.ID
	for i := range 200 {
		c, err := e.Create(&engine.Call{}, p.ID, engine.Spec{Name: fmt.Sprint("c", i)})
		if err != nil {
			t.Fatal(err)
		}
		kids = append(kids, c.ID)
	}
	for i := range grand {
		if _, err := e.Create(&engine.Call{}, kids[0], engine.Spec{Name: fmt.Sprint("g", i)}); err != nil {
			t.Fatal(err)
		}
	}
	h := newHub(e.Dump(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	w := watch(tenant.ID, p.ID, kids[0])
	w.ch, w.gone = make(chan note, 1000), make(chan struct{})
	h.mu.Lock()
	h.registerLocked(w)
	h.mu.Unlock()
	from := len(kept.evs)
	if err := e.Cancel(&engine.Call{}, p.ID); err != nil {
		t.Fatal(err)
	}
	evs := kept.evs[from:]
	if evs[0].Kind != engine.KindNodeEnding || len(evs) < 3 {
		t.Fatalf("the cancel emitted %d events, the first %s; want a node_ending and its steps", len(evs), evs[0].Kind)
	}
	return h, w, p.ID, kids, evs
}

// TestHubEndsAWideSubtreeAStepAtATime checks that the hub, which the
// writer goroutine feeds after every commit, ends a node_ending's node
// alone, and each node of a nodes_ended step when the step comes, naming
// the ended node as the cause: a watcher above hears of them in that order.
func TestHubEndsAWideSubtreeAStepAtATime(t *testing.T) {
	h, above, p, kids, evs := wideCancel(t, 0, func(tenant, _, _ engine.ID) *watcher {
		return &watcher{node: tenant, subtree: true}
	})
	h.publish(evs[:1], nil)
	if n := len(above.ch); n != 1 || h.nodes[kids[0]].state != engine.Active {
		t.Fatalf("the node_ending told the watcher of %d changes, the first child is %v; want 1 (the node alone) and active", n, h.nodes[kids[0]].state)
	}
	h.publish(evs[1:2], nil)
	if n, want := len(above.ch), 1+len(evs[1].IDs); n != want {
		t.Fatalf("after the first step the watcher heard %d changes; want %d", n, want)
	}
	h.publish(evs[2:], nil)
	if n := len(above.ch); n != 201 {
		t.Fatalf("after every step the watcher heard %d changes; want 201", n)
	}
	for _, id := range kids {
		if c := h.nodes[id]; c.state != engine.Cancelled || !strings.Contains(c.reason(), fmt.Sprintf("(node %d) was cancelled", p)) {
			t.Fatalf("child %d is %v, %q; want cancelled because its ancestor p was", id, c.state, c.reason())
		}
	}
}

// TestHubEndsAWatchedSubtreeAStepAtATime checks that a node_ending ends
// its node alone even while a watcher follows the node's subtree, so that
// the writer goroutine never walks the subtree at once: the watcher hears
// each child with its step and, once the last child has ended, the node's
// own end, its last note and the only one.
func TestHubEndsAWatchedSubtreeAStepAtATime(t *testing.T) {
	h, w, p, kids, evs := wideCancel(t, 0, func(_, p, _ engine.ID) *watcher {
		return &watcher{node: p, subtree: true}
	})
	h.publish(evs[:1], nil)
	if n := len(w.ch); n != 0 || h.nodes[kids[0]].state != engine.Active {
		t.Fatalf("the node_ending told the subtree's watcher of %d changes, the first child is %v; want none yet, and active", n, h.nodes[kids[0]].state)
	}
	h.publish(evs[1:len(evs)-1], nil)
	if n := len(w.ch); n != 200-len(evs[len(evs)-1].IDs) {
		t.Fatalf("before the last step the watcher heard %d changes; want %d, a child each", n, 200-len(evs[len(evs)-1].IDs))
	}
	h.publish(evs[len(evs)-1:], nil)
	expectNotes(t, w, 200, p)
}

// TestHubHoldsAWatchedEndUntilItsSubtreeEnds checks that a watcher of the
// subtree of a node that a step ends (a child of the node ending) hears
// every grandchild, which a later step ends, before its node's own end,
// which comes last.
func TestHubHoldsAWatchedEndUntilItsSubtreeEnds(t *testing.T) {
	h, w, _, kids, evs := wideCancel(t, 3, func(_, _, first engine.ID) *watcher {
		return &watcher{node: first, subtree: true}
	})
	for i := range evs {
		h.publish(evs[i:i+1], nil)
	}
	expectNotes(t, w, 3, kids[0])
}

// expectNotes reads what w was told: the ends of n nodes beneath node last,
// then the end of last, which closes the stream.
func expectNotes(t *testing.T, w *watcher, n int, last engine.ID) {
	t.Helper()
	if got := len(w.ch); got != n+1 {
		t.Fatalf("the watcher heard %d changes; want %d", got, n+1)
	}
	for i := range n + 1 {
		nt := <-w.ch
		if nt.last != (i == n) || (i == n) != (nt.msg.GetNodeId() == uint64(last)) || nt.msg.GetState() != governorv1.NodeState_NODE_STATE_CANCELLED {
			t.Fatalf("note %d: last %v for node %d, %v; want each cancelled, and the last, and only it, for node %d", i, nt.last, nt.msg.GetNodeId(), nt.msg.GetState(), last)
		}
	}
}

// TestHubUsageForgetsLeasesAStepAtATime checks that the hub's mirror of
// live leases forgets those on a node being ended in steps when its step
// comes: the node_ending's own at once, each child's with its step.
func TestHubUsageForgetsLeasesAStepAtATime(t *testing.T) {
	kept := &keptEvents{}
	e := engine.New(engine.Options{Clock: testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Sink: kept})
	tenant, err := e.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.OpenSession(&engine.Call{}, tenant.ID, time.Hour, [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	c := &engine.Call{Session: s.ID}
	p, err := e.Create(c, 0, engine.Spec{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var last engine.ID
	for i := range 200 {
		k, err := e.Create(c, p.ID, engine.Spec{Name: fmt.Sprint("c", i)})
		if err != nil {
			t.Fatal(err)
		}
		last = k.ID
	}
	for _, id := range []engine.ID{p.ID, last} {
		if _, _, err := e.Acquire(c, id, "db", 0); err != nil {
			t.Fatal(err)
		}
	}
	h := newHub(e.Dump(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	from := len(kept.evs)
	if err := e.Cancel(c, p.ID); err != nil {
		t.Fatal(err)
	}
	evs := kept.evs[from:]
	h.publish(evs[:1], nil)
	if n := len(h.usage.leases); n != 1 || len(h.usage.byNode[last]) != 1 {
		t.Fatalf("after the node_ending the hub holds %d leases; want only the last child's", n)
	}
	h.publish(evs[1:], nil)
	if n := len(h.usage.leases); n != 0 {
		t.Fatalf("after the steps the hub holds %d leases; want none", n)
	}
}

// TestHubCountsForgottenKeysAsGone checks that a key node the reaper
// forgets, active when it goes, no longer counts as active beneath its
// ancestors: a watcher of the tenant's subtree still hears the tenant's
// end, its last note, when the tenant is cancelled afterwards.
func TestHubCountsForgottenKeysAsGone(t *testing.T) {
	kept := &keptEvents{}
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: clock, Sink: kept})
	set := engine.DefaultSettings()
	set.KeyIdle = time.Minute
	if err := e.Configure(&engine.Call{}, set); err != nil {
		t.Fatal(err)
	}
	tenant, err := e.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	k := engine.KeyedLimit{Parent: tenant.ID, Group: "g", Key: "k", Resource: "api", Rate: engine.Rate{Limit: 10, Period: time.Minute}}
	if _, err := e.ConsumeKeyed(&engine.Call{}, k, 1, engine.ConsumeOptions{}); err != nil {
		t.Fatal(err)
	}
	h := newHub(e.Dump(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	w := &watcher{node: tenant.ID, subtree: true, ch: make(chan note, 10), gone: make(chan struct{})}
	h.mu.Lock()
	h.registerLocked(w)
	h.mu.Unlock()
	from := len(kept.evs)
	clock.Advance(2 * time.Minute)
	e.Reap(&engine.Call{})
	if err := e.Cancel(&engine.Call{}, tenant.ID); err != nil {
		t.Fatal(err)
	}
	evs := kept.evs[from:]
	if evs[0].Kind != engine.KindKeysForgotten {
		t.Fatalf("the reaper emitted %s first; want keys_forgotten", evs[0].Kind)
	}
	h.publish(evs, nil)
	if len(w.ch) != 1 {
		t.Fatalf("after the key was forgotten and the tenant cancelled, the watcher heard %d changes; want 1, the tenant's end", len(w.ch))
	}
	if nt := <-w.ch; !nt.last || nt.msg.GetNodeId() != uint64(tenant.ID) {
		t.Fatalf("the watcher heard node %d, last %v; want the tenant's end, last", nt.msg.GetNodeId(), nt.last)
	}
}
