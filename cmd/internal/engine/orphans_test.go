package engine

import (
	"testing"
	"time"
)

// TestRecordCutAfterASessionsEnd: the record holds a session's close but not
// the ends of the nodes it owned, as when governord is killed between the
// two commits that carry them. Replayed, and restored from a snapshot taken
// then, the engine keeps its invariants, each orphan answers as the
// session's end made it: cancelled at the close's instant, for its owner's
// end, its child cancelled with it; and Reap's steps end them so.
func TestRecordCutAfterASessionsEnd(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	owner, other := f.session(ten, time.Hour), f.session(ten, time.Hour)
	task := f.create(owner, 0, Spec{Name: "task"})
	child := f.create(owner, task, Spec{Name: "child"})
	kept := f.create(other, 0, Spec{Name: "kept"})
	must(t, f.e.CloseSession(&Call{Session: owner}))
	cut := 0
	for i, ev := range f.rec.events {
		if ev.Kind == KindSessionClosed && ev.Target == owner {
			cut = i + 1
		}
	}
	if cut == 0 || cut == len(f.rec.events) {
		t.Fatalf("the close is event %d of %d; want it followed by the nodes' ends", cut, len(f.rec.events))
	}
	engines := loadedCut(t, f.clock, f.rec.events[:cut])
	for _, e := range engines {
		must(t, checkState(e))
	}
	closed := f.rec.events[cut-1].Time
	for how, e := range engines {
		if inf, _, _, err := e.Describe(&Call{}, task, nil); err != nil || inf.State != Cancelled || !inf.OwnerEnded || inf.Ended != closed {
			t.Fatalf("%s: the orphaned task: %+v, %v; want cancelled at %d for its owner's end", how, inf, err, closed)
		}
		if inf, _, _, err := e.Describe(&Call{}, child, nil); err != nil || inf.State != Cancelled || inf.OwnerEnded || inf.Ended != closed {
			t.Fatalf("%s: the orphan's child: %+v, %v; want cancelled at %d with its parent", how, inf, err, closed)
		}
		e.Reap(&Call{})
		for id, want := range map[ID]State{task: Cancelled, child: Cancelled, kept: Active} {
			if n := e.nodes[id]; n.state != want {
				t.Fatalf("%s: node %d is %v; want %v", how, id, n.state, want)
			}
		}
		must(t, checkState(e))
	}
}

// TestASessionsEndMarksInBoundedHolds checks that the hold in which a
// session's end is decided lists none of its nodes as changed, however many
// it owns, and that Capture lists the marks in parts of at most its chunk
// (listed and copied together),
// so that an image taken between the session's end and the steps, restored,
// answers as the engine did: every node cancelled at the lapse's instant
// for its owner's end, beneath them cancelled with them; and Reap's steps
// end them so.
func TestASessionsEndMarksInBoundedHolds(t *testing.T) {
	w := newOwnerWorld(t, time.Second)
	f := w.f
	f.e.captureChunk = 4
	img := NewImage(f.e.Dump())
	img.Apply(f.e.Capture())
	f.clock.Advance(2 * time.Second)
	lapsed := f.clock.Now().UnixNano()
	before := len(f.e.dirty.nodes)
	f.describe(w.owned[5]) // takes the lapse
	if grew := len(f.e.dirty.nodes) - before; grew > 4 {
		t.Fatalf("the hold of the session's end listed %d nodes as changed; want at most 4 (endStep), not one a node it owned", grew)
	}
	f.clock.Advance(time.Second)
	f.create(w.other, 0, Spec{Name: "later"}) // the image's instant is past the lapse
	before = len(f.e.dirty.nodes)
	part := f.e.capturePart()
	if listed := len(f.e.dirty.nodes) + len(part.Nodes) + len(part.NodesGone) - before; listed > 4 {
		t.Fatalf("a part of the capture listed or copied %d nodes; want at most 4 (captureChunk)", listed)
	}
	img.Apply(part)
	delta := f.e.Capture()
	for d := delta; d != nil; d = d.then {
		if len(d.Nodes)+len(d.NodesGone) > 4 {
			t.Fatalf("a part of the capture copied %d nodes; want at most 4 (captureChunk)", len(d.Nodes)+len(d.NodesGone))
		}
	}
	img.Apply(delta)
	st := img.Snapshot()
	if want := f.e.Dump(); !equalSnapshots(st, want) {
		t.Fatalf("the image taken between the session's end and its steps differs from the engine:\n%s", diffSnapshots(st, want))
	}
	restored, err := Restore(Options{Clock: f.clock, Sink: &recorder{}}, st)
	must(t, err)
	must(t, checkState(restored))
	for _, id := range w.owned {
		if inf, _, _, err := restored.Describe(&Call{}, id, nil); err != nil || inf.State != Cancelled || !inf.OwnerEnded || inf.Ended != lapsed {
			t.Fatalf("restored: owned node %d answers %+v, %v; want cancelled at %d for its owner's end", id, inf, err, lapsed)
		}
	}
	restored.endStep = 4
	restored.Reap(f.sys())
	wantOwnerEnded(t, restored, w, lapsed)
	must(t, checkState(restored))
}
