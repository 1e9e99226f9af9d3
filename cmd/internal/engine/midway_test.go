package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestLoadCutMidwayFinishesTheSteps cuts the record of a wide subtree ended
// in steps after every event, replays each cut and restores a snapshot of
// it: the load notes as midway exactly the ended nodes with an active
// child, the invariants hold, and Reap then ends every node as the live
// engine did. The whole record replayed leaves nothing noted, so the first
// step after it looks at no tree.
func TestLoadCutMidwayFinishesTheSteps(t *testing.T) {
	w := newSteppedWorld(t)
	f := w.f
	from := len(f.rec.events)
	must(t, f.e.Cancel(&Call{Session: w.s}, w.p))
	ended := f.describe(w.p).Ended
	for cut := from + 1; cut <= len(f.rec.events); cut++ {
		for how, e := range loadedCut(t, f.clock, f.rec.events[:cut]) {
			if got, want := midwayIDs(e), endedWithActiveChild(e); got != want {
				t.Fatalf("%s after event %d of %d: midway %s; want %s", how, cut, len(f.rec.events), got, want)
			}
			must(t, checkState(e))
			e.endStep = 4
			e.Reap(f.sys())
			for _, id := range append(append([]ID{w.p}, w.kids...), w.grand...) {
				if n := e.nodes[id]; n.state != Cancelled || n.ended != ended {
					t.Fatalf("%s after event %d: node %d is %v at %d once Reap returned; want cancelled at %d", how, cut, id, n.state, n.ended, ended)
				}
			}
			must(t, checkState(e))
		}
	}
}

// midwayIDs lists, in id order, the nodes e noted as ending midway.
func midwayIDs(e *Engine) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []ID
	for id := range e.midway {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return fmt.Sprint(ids)
}

// endedWithActiveChild lists, in id order, the ended nodes of e that have
// an active child, looking at every node.
func endedWithActiveChild(e *Engine) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []ID
	for _, n := range e.nodes {
		if n.state == Active {
			continue
		}
		for ch := range n.order.all() {
			if ch.state == Active {
				ids = append(ids, n.id)
				break
			}
		}
	}
	slices.Sort(ids)
	return fmt.Sprint(ids)
}

// BenchmarkFirstStepAfterRestore measures the first step of ending after a
// restore of a snapshot holding that many ended nodes, within retention,
// and one wide subtree caught midway: its cost is that of the subtree
// still to end, whatever the number of nodes.
func BenchmarkFirstStepAfterRestore(b *testing.B) {
	for _, nodes := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint("nodes=", nodes), func(b *testing.B) {
			f := newFixture(b)
			set := DefaultSettings()
			set.NodeRetention = time.Hour
			must(b, f.e.Configure(f.sys(), set))
			ten := f.tenant(Spec{Name: "t"})
			for i := range nodes {
				must(b, f.e.Cancel(f.sys(), f.sysCreate(ten, Spec{Name: fmt.Sprint("done", i)})))
			}
			p := f.sysCreate(ten, Spec{Name: "p"})
			for i := range 2 * defaultEndStep {
				f.sysCreate(p, Spec{Name: fmt.Sprint("c", i)})
			}
			f.e.mu.Lock()
			f.e.emitEndLocked(&Event{}, f.e.nodes[p], Cancelled, f.e.nowLocked()) // the node and one step; the rest waits
			f.e.mu.Unlock()
			dump := f.e.Dump()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				r, err := Restore(Options{Clock: f.clock}, dump)
				must(b, err)
				b.StartTimer()
				r.mu.Lock()
				r.stepLocked(r.nowLocked())
				r.mu.Unlock()
			}
		})
	}
}
