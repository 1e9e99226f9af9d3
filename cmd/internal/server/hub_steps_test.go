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
)

// keptEvents keeps every event an engine emits.
type keptEvents struct{ evs []*engine.Event }

func (k *keptEvents) Emit(ev *engine.Event) { k.evs = append(k.evs, ev) }

// wideCancel builds a tenant with a node p of 200 children, starts a hub
// from it, registers w (if not nil) on the hub, cancels p and returns the
// hub, the ids and the events of the cancel: a node_ending and its steps.
func wideCancel(t *testing.T, watch func(tenant, p engine.ID) *watcher) (*hub, *watcher, engine.ID, []engine.ID, []*engine.Event) {
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
	h := newHub(e.Dump(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	w := watch(tenant.ID, p.ID)
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
	h, above, p, kids, evs := wideCancel(t, func(tenant, _ engine.ID) *watcher {
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

// TestHubEndsAWatchedSubtreeWhole checks that while a watcher follows the
// subtree of a node being ended in steps, the hub ends the whole subtree
// at the node_ending, so that the stream hears every child before its last
// note, the node's own end; the steps then change nothing.
func TestHubEndsAWatchedSubtreeWhole(t *testing.T) {
	h, w, p, _, evs := wideCancel(t, func(_, p engine.ID) *watcher {
		return &watcher{node: p, subtree: true}
	})
	h.publish(evs[:1], nil)
	if n := len(w.ch); n != 201 {
		t.Fatalf("the node_ending told the subtree's watcher of %d changes; want 201", n)
	}
	for i := range 201 {
		nt := <-w.ch
		if nt.last != (i == 200) || nt.last && nt.msg.GetNodeId() != uint64(p) {
			t.Fatalf("note %d: last %v for node %d; want the last, and only it, for p", i, nt.last, nt.msg.GetNodeId())
		}
	}
	h.publish(evs[1:], nil)
	if n := len(w.ch); n != 0 {
		t.Fatalf("the steps told the ended stream of %d more changes", n)
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
