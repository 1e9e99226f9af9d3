package engine

import (
	"reflect"
	"testing"
	"time"
)

// giver is a sink that copies each event and gives it back to the engine at
// once, before emitLocked has returned: the earliest a sink may. With
// harsh set, it also drops the engine's spare events, so that each event is
// made in the one before it.
type giver struct {
	e     *Engine
	harsh bool
	seen  []Event
	back  map[*Event]bool // every event given back so far
}

func (g *giver) Emit(ev *Event) {
	g.seen = append(g.seen, *ev)
	g.back[ev] = true
	g.e.Recycle([]*Event{ev})
	if g.harsh {
		g.e.spare = g.e.spare[:0]
	}
}

// recycleScript drives an engine through events of every shape, filled in
// place and copied, with and without request ids, and returns what each
// call answered.
func recycleScript(f *fixture) []any {
	var out []any
	note := func(v ...any) { out = append(out, v...) }
	must(f.t, f.e.Configure(f.sys(), Settings{TombstoneTTL: time.Second, NodeRetention: time.Second, MaxScheduleWait: time.Minute}))
	ten := f.tenant(Spec{Name: "t", Quotas: map[string]int64{"http": 100}, Limits: map[string]int64{"db": 2}})
	s := f.session(ten, time.Minute)
	c := &Call{Session: s, Request: "r1"}
	inf, err := f.e.Create(c, ten, Spec{Name: "task", Quotas: map[string]int64{"http": 50}, Weight: 3, Priority: 2})
	note(inf.ID, err)
	node, made, err := f.e.Ensure(&Call{Session: s, Request: "r2"}, ten, Spec{Name: "sub"}, &Charge{Resource: "http", Amount: 2})
	note(node.ID, made, err)
	note(f.e.Consume(&Call{Session: s, Request: "r3"}, inf.ID, "http", 3))
	must(f.t, f.e.SetDefaults(&Call{Session: s}, ten, Defaults{Caps: Caps{Quotas: map[string]int64{"http": 9}}}))
	must(f.t, f.e.SetLimit(&Call{Session: s, Request: "r4"}, inf.ID, "db", ptr(1)))
	l, w, err := f.e.Acquire(&Call{Session: s, Request: "r5"}, inf.ID, "db", time.Second)
	note(l.ID, w == nil, err)
	note(f.e.Release(&Call{Session: s, Request: "r6"}, l.ID, Report{LatencyNanos: 7, Overloaded: true}))
	l, w, err = f.e.Acquire(&Call{Session: s}, inf.ID, "db", 0)
	note(l.ID, w == nil, err)
	note(f.e.Release(&Call{Session: s}, l.ID, Report{}))
	l, _, err = f.e.Acquire(&Call{Session: s}, node.ID, "db", time.Second)
	note(l.ID, err)
	must(f.t, f.e.Cancel(&Call{Session: s}, node.ID))
	f.clock.Advance(2 * time.Second)
	f.e.Reap(f.sys())
	l, w, err = f.e.Acquire(&Call{Session: s}, inf.ID, "db", 0)
	note(l.ID, w == nil, err)
	note(f.e.Release(&Call{Session: s}, l.ID, Report{}))
	note(f.e.Consume(&Call{Session: s, Request: "r3"}, inf.ID, "http", 3)) // remembered
	return out
}

// TestRecycledEventsCarryNothingOver runs one script on an engine whose sink
// gives every event back at once and on one whose sink keeps them: the
// answers and the events must be the same, so an event filled in a reused
// one carries nothing of its earlier life, and nothing reads an event once
// the sink has it. Each event is made in the one before it.
func TestRecycledEventsCarryNothingOver(t *testing.T) {
	kept := newFixture(t)
	want := recycleScript(kept)
	f := newFixture(t)
	g := &giver{e: f.e, harsh: true, back: map[*Event]bool{}}
	f.e.sink = g
	got := recycleScript(f)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answers with events given back:\n%v\nkeeping them:\n%v", got, want)
	}
	if len(g.seen) != len(kept.rec.events) {
		t.Fatalf("%d events with events given back, %d keeping them", len(g.seen), len(kept.rec.events))
	}
	for i, ev := range kept.rec.events {
		if !reflect.DeepEqual(g.seen[i], *ev) {
			t.Errorf("event %d differs:\ngiven back: %+v\nkept:       %+v", i+1, g.seen[i], *ev)
		}
	}
	a, b := kept.e.Dump(), f.e.Dump()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the engines differ after the same script")
	}
}

// TestGivenBackEventsAreReused checks that Recycle saves allocations: with
// every event given back, 80 events are made in the first block of spare
// ones; kept, each needs its own.
func TestGivenBackEventsAreReused(t *testing.T) {
	f := newFixture(t)
	g := &giver{e: f.e, back: map[*Event]bool{}}
	f.e.sink = g
	ten := f.tenant(Spec{Name: "t"})
	s := f.session(ten, time.Minute)
	for range 40 {
		f.release(s, f.grant(s, ten, "db").ID)
	}
	if len(g.seen) < 80 || len(g.back) > eventBlock {
		t.Fatalf("%d events were made in %d distinct ones, want at most %d", len(g.seen), len(g.back), eventBlock)
	}
}
