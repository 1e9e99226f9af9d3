package engine

import (
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/testclock"
)

// rebuild replays every event, through its stored form, on a fresh engine
// with its own clock set to now.
func rebuild(t *testing.T, events []*Event, now time.Time) (*Engine, *testclock.Clock) {
	t.Helper()
	clock := testclock.New(now)
	e := New(Options{Clock: clock})
	for _, ev := range events {
		data, err := ev.Encode()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := DecodeEvent(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Replay(dec); err != nil {
			t.Fatalf("replay event %d (%s): %v", ev.Seq, ev.Kind, err)
		}
	}
	return e, clock
}

func restored(t *testing.T, live *Engine, now time.Time) (*Engine, *testclock.Clock) {
	t.Helper()
	data, err := live.Dump().Encode()
	if err != nil {
		t.Fatal(err)
	}
	st, err := DecodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	clock := testclock.New(now)
	e, err := Restore(Options{Clock: clock}, st)
	if err != nil {
		t.Fatal(err)
	}
	return e, clock
}

// everyWay runs check on the fixture's live engine, on one rebuilt from its
// events and on one restored from its snapshot, each named for the message.
func (f *fixture) everyWay(t *testing.T, check func(e *Engine, how string)) {
	t.Helper()
	check(f.e, "live")
	replayed, _ := rebuild(t, f.rec.events, f.clock.Now())
	check(replayed, "after replay")
	fromSnapshot, _ := restored(t, f.e, f.clock.Now())
	check(fromSnapshot, "after a snapshot")
}

// TestRateReplayAndRestore: rate state rebuilt from events or from a
// snapshot is the live state, bookings included, and a rebuilt engine
// answers later calls as the live one does: a restart hands out no fresh
// bucket.
func TestRateReplayAndRestore(t *testing.T) {
	f := newFixture(t)
	ny := "America/New_York"
	tenant := f.tenant(Spec{Name: "acme", Rates: map[string]Rate{
		"http":  {Limit: 10, Period: time.Minute, Algorithm: LeakyBucket},
		"calls": {Limit: 5, Calendar: Day, Zone: ny},
	}})
	must(t, f.e.SetDefaults(f.sys(), tenant, Defaults{Caps: Caps{Rates: map[string]Rate{"http": {Limit: 3, Period: time.Second}}}}))
	task := f.sysCreate(tenant, Spec{Name: "task"})
	for i := range 14 {
		if _, err := f.e.ConsumeWith(f.sys(), task, "http", 1, ConsumeOptions{MaxWait: time.Minute}); err != nil && i < 3 {
			t.Fatal(err)
		}
		f.clock.Advance(77 * time.Millisecond)
	}
	f.consume(0, tenant, "calls", 3)
	_, _ = f.e.ConsumeWith(f.sys(), tenant, "calls", 5, ConsumeOptions{Drain: true})
	f.clock.Advance(1500 * time.Millisecond)
	for range 12 {
		_, _ = f.e.ConsumeWith(f.sys(), tenant, "http", 1, ConsumeOptions{MaxWait: 2 * time.Minute})
	}
	must(t, f.e.SetRate(f.sys(), tenant, "http", &Rate{Limit: 7, Period: time.Minute, Burst: 2, Algorithm: LeakyBucket}))
	must(t, f.e.ResetRate(f.sys(), task, "http"))
	f.clock.Advance(3 * time.Second)

	live := f.e.Dump()
	if live.Nodes[1].Res["http"].Rate == nil || !f.describe(tenant).Rates["http"].Debt {
		t.Fatal("the history did not leave the tenant's bucket in debt")
	}
	now := f.clock.Now()
	replayed, rclock := rebuild(t, f.rec.events, now)
	fromSnap, sclock := restored(t, f.e, now)
	for way, e := range map[string]*Engine{"replay": replayed, "snapshot": fromSnap} {
		if got := e.Dump(); !equalSnapshots(got, live) {
			t.Fatalf("%s differs from live:\n%s", way, diffSnapshots(got, live))
		}
	}
	if got, want := fromSnap.Stats().RateCaps, f.e.Stats().RateCaps; got != want || want != 3 {
		t.Fatalf("rate caps: restored %d, live %d, want 3", got, want)
	}
	// Time passes by the same amount everywhere; every engine answers alike.
	for step := range 40 {
		for _, c := range []*testclock.Clock{f.clock, rclock, sclock} {
			c.Advance(time.Duration(step) * 450 * time.Millisecond)
		}
		want, werr := f.e.ConsumeWith(f.sys(), task, "http", 1, ConsumeOptions{MaxWait: 30 * time.Second})
		for way, e := range map[string]*Engine{"replay": replayed, "snapshot": fromSnap} {
			got, err := e.ConsumeWith(&Call{}, task, "http", 1, ConsumeOptions{MaxWait: 30 * time.Second})
			if got != want || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
				t.Fatalf("step %d, %s: %+v %v, live %+v %v", step, way, got, err, want, werr)
			}
		}
	}
}
