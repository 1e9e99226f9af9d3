package engine

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// holdClock counts the engine's readings of the time: each hold of the
// lock reads it once, first, so the events emitted between two readings
// are one hold's.
type holdClock struct {
	Clock
	reads int
}

func (c *holdClock) Now() time.Time {
	c.reads++
	return c.Clock.Now()
}

// holdSink notes, for every event, the hold of the lock that emitted it.
type holdSink struct {
	clock *holdClock
	rec   *recorder
	holds []int
}

func (s *holdSink) Emit(ev *Event) {
	s.holds = append(s.holds, s.clock.reads)
	s.rec.Emit(ev)
}

// burstWorld has 12 sessions of one TTL, opened at one instant, each
// holding or waiting for one of slots slots, and with queue a session of
// an hour waiting for a slot too: when the 12 lapse together, each lapse
// frees or drops what its session had, and the waiter of the hour is
// granted a slot.
type burstWorld struct {
	f      *fixture
	sink   *holdSink
	waiter *Waiter
}

// newHoldFixture is a fixture whose sink tells which hold of the lock
// emitted each event, with steps of 4.
func newHoldFixture(t *testing.T) (*fixture, *holdSink) {
	f := &fixture{t: t, clock: newFakeClock(), rec: &recorder{}}
	clock := &holdClock{Clock: f.clock}
	sink := &holdSink{clock: clock, rec: f.rec}
	f.e = New(Options{Clock: clock, Sink: sink})
	f.e.endStep = 4
	return f, sink
}

// perHold counts, by the hold that emitted them, the ids of the events of
// kind among evs, the events from the from-th on.
func perHold(s *holdSink, evs []*Event, from int, kind Kind) map[int]int {
	out := map[int]int{}
	for i, ev := range evs[from:] {
		if ev.Kind == kind {
			out[s.holds[from+i]] += max(len(ev.IDs), 1)
		}
	}
	return out
}

func newBurstWorld(t *testing.T, slots int64, queue bool) *burstWorld {
	f, sink := newHoldFixture(t)
	ten := f.tenant(Spec{Name: "t", Limits: map[string]int64{"db": slots}})
	for i := range 12 {
		s := f.session(ten, time.Second)
		f.acquire(s, f.create(s, 0, Spec{Name: fmt.Sprint("n", i)}), "db")
	}
	bw := &burstWorld{f: f, sink: sink}
	if queue {
		long := f.session(ten, time.Hour)
		if _, bw.waiter = f.acquire(long, f.create(long, 0, Spec{Name: "long"}), "db"); bw.waiter == nil {
			t.Fatal("the session of an hour was granted a slot at once; want it waiting")
		}
	}
	return bw
}

// TestReapTakesABurstOfDecisionsInBoundedHolds lets 12 sessions lapse at
// one instant: Reap takes their lapses in holds of at most endStep
// decisions each, and ends where a call that took them all in one hold
// ends: the same events, in the same order, and the same state.
func TestReapTakesABurstOfDecisionsInBoundedHolds(t *testing.T) {
	stepped, whole := newBurstWorld(t, 2, true), newBurstWorld(t, 2, true)
	from := len(stepped.f.rec.events)
	for _, w := range []*burstWorld{stepped, whole} {
		w.f.clock.Advance(2 * time.Second)
	}
	stepped.f.e.Reap(stepped.f.sys())
	whole.f.describe(RootID) // takes every due decision in its one hold
	whole.f.e.Reap(whole.f.sys())

	lapses := perHold(stepped.sink, stepped.f.rec.events, from, KindSessionExpired)
	total := 0
	for hold, n := range lapses {
		if n > 4 {
			t.Errorf("hold %d took %d lapses; want at most 4 (endStep)", hold, n)
		}
		total += n
	}
	if total != 12 || len(lapses) < 3 {
		t.Fatalf("Reap took %d lapses in %d holds; want 12 in at least 3", total, len(lapses))
	}
	if got, want := eventList(stepped.f.rec.events[from:]), eventList(whole.f.rec.events[from:]); got != want {
		t.Fatalf("Reap in steps emitted\n%s\nwhere one hold emitted\n%s", got, want)
	}
	must(t, checkState(stepped.f.e))
	if a, b := stepped.f.e.Dump(), whole.f.e.Dump(); !equalSnapshots(a, b) {
		t.Fatalf("Reap in steps left another state than one hold:\n%s", diffSnapshots(a, b))
	}
	select {
	case <-stepped.waiter.C():
	default:
		t.Fatal("the waiter of an hour was not granted a freed slot")
	}
}

// eventList is evs as text, one event a line, without their times.
func eventList(evs []*Event) string {
	out := ""
	for _, ev := range evs {
		out += fmt.Sprintf("%d %s target=%d node=%d ids=%v\n", ev.Seq, ev.Kind, ev.Target, ev.Node, ev.IDs)
	}
	return out
}

// TestRecordCutBetweenDueStepsFinishesAlike cuts the record of a stepped
// Reap after each of its events, as a governord killed there would leave
// it, replays the cut and restores a snapshot of it, and has each Reap:
// both end where the uncut run ended. (Every session holds a slot: a
// waiter does not outlive a restart.)
func TestRecordCutBetweenDueStepsFinishesAlike(t *testing.T) {
	w := newBurstWorld(t, 12, false)
	f := w.f
	from := len(f.rec.events)
	f.clock.Advance(2 * time.Second)
	f.e.Reap(f.sys())
	want := f.e.Dump()
	for cut := from; cut <= len(f.rec.events); cut++ {
		for how, e := range loadedCut(t, f.clock, f.rec.events[:cut]) {
			must(t, checkState(e))
			e.endStep = 4
			e.Reap(f.sys())
			must(t, checkState(e))
			if got := e.Dump(); !equalSnapshots(got, want) {
				t.Fatalf("%s after event %d of %d, then Reap:\n%s", how, cut, len(f.rec.events), diffSnapshots(got, want))
			}
		}
	}
}

// idleKeys is a tenant with 10 keys under one group, each hit once, whose
// keys are forgotten after a minute idle.
func idleKeys(t *testing.T) (*keyedWorld, *holdSink) {
	f, sink := newHoldFixture(t)
	w := &keyedWorld{fixture: f, tenant: f.tenant(Spec{Name: "acme"})}
	set := DefaultSettings()
	set.KeyIdle = time.Minute
	must(t, f.e.Configure(f.sys(), set))
	for i := range 10 {
		if _, err, _ := w.hit(w.limit(fmt.Sprint("k", i), Rate{Limit: 10, Period: time.Second}), 1, ConsumeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return w, sink
}

// TestReapForgetsIdleKeysInBoundedHolds lets 10 keys go idle together:
// Reap forgets them, and their group with the last, in holds that look at
// at most endStep key timers each.
func TestReapForgetsIdleKeysInBoundedHolds(t *testing.T) {
	w, sink := idleKeys(t)
	from := len(w.rec.events)
	w.clock.Advance(2 * time.Minute)
	w.e.Reap(w.sys())
	forgot := perHold(sink, w.rec.events, from, KindKeysForgotten)
	total := 0
	for hold, n := range forgot {
		if n > 4+1 { // 4 keys, and their group after its last
			t.Errorf("hold %d forgot %d nodes; want at most 4 keys and their group", hold, n)
		}
		total += n
	}
	if total != 11 || len(forgot) < 3 {
		t.Fatalf("Reap forgot %d nodes in %d holds; want the 10 keys and their group in at least 3", total, len(forgot))
	}
	if left := w.keyedNodes(); len(left) != 0 {
		t.Fatalf("keyed nodes left after Reap: %v", left)
	}
	must(t, checkState(w.e))
}

// TestRecordCutBetweenKeyStepsFinishesAlike cuts the record of forgetting
// idle keys in steps after each of its events, and has the replayed and
// the restored engine Reap: each forgets what the uncut run forgot.
func TestRecordCutBetweenKeyStepsFinishesAlike(t *testing.T) {
	w, _ := idleKeys(t)
	from := len(w.rec.events)
	w.clock.Advance(2 * time.Minute)
	w.e.Reap(w.sys())
	want := fmt.Sprint(nodeIDs(w.e))
	for cut := from; cut <= len(w.rec.events); cut++ {
		for how, e := range loadedCut(t, w.clock, w.rec.events[:cut]) {
			e.endStep = 4
			e.Reap(w.sys())
			must(t, checkState(e))
			if got := fmt.Sprint(nodeIDs(e)); got != want {
				t.Fatalf("%s after event %d of %d, then Reap: nodes %s; want %s", how, cut, len(w.rec.events), got, want)
			}
		}
	}
}

// nodeIDs lists the ids of e's nodes in order.
func nodeIDs(e *Engine) []ID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(maps.Keys(e.nodes))
}
