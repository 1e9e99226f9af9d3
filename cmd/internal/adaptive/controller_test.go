package adaptive

import (
	"context"

	"errors"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

var dbClass = Class{
	Name: "db", Initial: 20, Min: 2, Max: 40, TargetP95: 100 * time.Millisecond,
	MaxOverloadShare: 0.1, Interval: time.Hour, MinSamples: 10,
}

// feed releases n leases of class on a fresh tenant, the first over of them
// reporting overload, each reporting latency lat, and waits until the
// controller has taken in all of them.
func (r *rig) feed(tenant string, n, over int, lat time.Duration) {
	r.t.Helper()
	node, sess := r.session(tenant)
	for i := range n {
		r.use(sess, node, "db", engine.Report{LatencyNanos: int64(lat), Overloaded: i < over})
	}
	r.awaitSamples("db", n)
}

func (r *rig) step(want bool) {
	r.t.Helper()
	changed, err := r.ctl.Step("db")
	must(r.t, err)
	if changed != want {
		r.t.Fatalf("Step changed = %v, want %v", changed, want)
	}
	if d, seq := r.store.Durable(), r.store.Engine.Seq(); d < seq {
		r.t.Fatalf("Step returned with event %d made and only %d on record", seq, d)
	}
}

func (r *rig) wantLimit(want int64) {
	r.t.Helper()
	if got, ok := r.limit("db"); !ok || got != want {
		r.t.Fatalf("root limit on db = %d (set %v), want %d", got, ok, want)
	}
}

// TestChangesAreRecordedWithTheirInputs drives releases through a store on
// SQLite and reads the limit changes back from the record: each carries the
// samples, p95, overload share and reason that caused it.
func TestChangesAreRecordedWithTheirInputs(t *testing.T) {
	url := sqliteURL(t)
	r := openRig(t, url, dbClass)
	r.step(true) // no limit yet: Initial
	r.wantLimit(20)
	r.feed("a", 10, 3, 40*time.Millisecond)
	r.step(true)
	r.wantLimit(14)
	r.feed("b", 10, 0, 40*time.Millisecond)
	r.step(true)
	r.wantLimit(15)
	r.feed("c", 12, 0, 250*time.Millisecond)
	r.step(true)
	r.wantLimit(10)
	r.feed("d", 4, 0, time.Millisecond)
	r.step(false) // 4 reports, 10 needed
	r.wantLimit(10)
	r.close()

	got := limitSets(t, url)
	want := []engine.Adapt{
		{Reason: ReasonInitial},
		{Samples: 10, P95Nanos: int64(40 * time.Millisecond), OverloadShare: 0.3, Reason: ReasonOverload},
		{Samples: 10, P95Nanos: int64(40 * time.Millisecond), Reason: ReasonHealthy},
		{Samples: 12, P95Nanos: int64(250 * time.Millisecond), Reason: ReasonLatency},
	}
	values := []int64{20, 14, 15, 10}
	if len(got) != len(want) {
		t.Fatalf("%d limit changes on record, want %d", len(got), len(want))
	}
	for i, ev := range got {
		if ev.Node != engine.RootID || ev.Name != "db" || ev.Value == nil || *ev.Value != values[i] ||
			ev.Adapt == nil || *ev.Adapt != want[i] || ev.Session != 0 {
			t.Errorf("change %d on record: node %d class %s value %v adapt %+v session %d; want root db %d %+v",
				i, ev.Node, ev.Name, ev.Value, ev.Adapt, ev.Session, values[i], want[i])
		}
	}
}

// TestRestartResumesTheLearnedLimit closes the store after the controller
// has moved the limit and opens it again: a new controller starts from the
// learned limit, not from Initial, and records nothing at start.
func TestRestartResumesTheLearnedLimit(t *testing.T) {
	url := sqliteURL(t)
	r := openRig(t, url, dbClass)
	r.ctl.Start()
	r.wantLimit(20)
	r.feed("a", 10, 10, time.Millisecond)
	r.step(true)
	r.wantLimit(14)
	r.close()

	r = openRig(t, url, dbClass)
	r.ctl.Start()
	r.wantLimit(14)
	r.feed("b", 10, 0, time.Millisecond)
	r.step(true)
	r.wantLimit(15)
	r.close()
	if n := len(limitSets(t, url)); n != 3 {
		t.Fatalf("%d limit changes on record, want 3 (initial, cut, probe)", n)
	}
}

// TestStartKeepsALimitSetBeforeIt: a root limit already on record (set by
// the configuration, or by an operator) is where the controller starts.
func TestStartKeepsALimitSetBeforeIt(t *testing.T) {
	r := openRig(t, "", dbClass)
	defer r.close()
	seven := int64(7)
	must(t, r.do(&engine.Call{}, func(c *engine.Call) error {
		return r.store.Engine.SetLimit(c, engine.RootID, "db", &seven)
	}))
	r.ctl.Start()
	r.ctl.Start()
	r.wantLimit(7)
}

// TestOperatorEditWins: a decision computed from a limit an operator has
// since changed is dropped, not written over the operator's value; so is an
// initial limit when the operator set one first.
func TestOperatorEditWins(t *testing.T) {
	r := openRig(t, "", dbClass)
	defer r.close()
	ctx := context.Background()
	r.ctl.Start()
	r.wantLimit(dbClass.Initial)
	read := dbClass.Initial
	three := int64(3)
	must(t, r.do(&engine.Call{}, func(c *engine.Call) error {
		return r.store.Engine.SetLimit(c, engine.RootID, "db", &three)
	}))
	moved, err := r.ctl.set(ctx, "db", &read, read+1, engine.Adapt{Reason: "healthy"})
	if err != nil || moved {
		t.Fatalf("set from a stale limit = %v, %v; want false, nil", moved, err)
	}
	r.wantLimit(3)
	if moved, err := r.ctl.set(ctx, "db", nil, 9, engine.Adapt{Reason: ReasonInitial}); err != nil || moved {
		t.Fatalf("initial limit over an operator's = %v, %v; want false, nil", moved, err)
	}
	r.wantLimit(3)
	if moved, err := r.ctl.set(ctx, "db", &three, 4, engine.Adapt{Reason: "healthy"}); err != nil || !moved {
		t.Fatalf("set from the current limit = %v, %v; want true, nil", moved, err)
	}
	r.wantLimit(4)
}

// TestLoweringRevokesNothing: a cut below what is held takes no lease back;
// grants wait until enough leases come back.
func TestLoweringRevokesNothing(t *testing.T) {
	r := openRig(t, "", Class{Name: "db", Initial: 4, Min: 1, Max: 4, MinSamples: 1, Interval: time.Hour})
	defer r.close()
	r.step(true)
	node, sess := r.session("a")
	var held []engine.ID
	for range 4 {
		must(t, r.do(&engine.Call{Session: sess}, func(c *engine.Call) error {
			info, w, err := r.store.Engine.Acquire(c, node, "db", 0)
			if w != nil {
				t.Fatal("an acquire waited below the limit")
			}
			held = append(held, info.ID)
			return err
		}))
	}
	r.ctl.Observe([]*engine.Event{{Kind: engine.KindLeaseReleased, Target: held[0], Session: sess, Name: "db", Report: engine.Report{Overloaded: true}}})
	r.step(true)
	r.wantLimit(2)
	for _, id := range held {
		must(t, r.do(&engine.Call{}, func(c *engine.Call) error {
			_, err := r.store.Engine.Validate(c, id)
			return err
		}))
	}
}

// TestObserveTakesOnlyReportsOfItsClasses: other kinds, other classes and a
// release without a session (an abandoned grant handed back) are not samples.
func TestObserveTakesOnlyReportsOfItsClasses(t *testing.T) {
	r := openRig(t, "", dbClass)
	defer r.close()
	r.ctl.Observe([]*engine.Event{
		{Kind: engine.KindLeaseReleased, Target: 50, Session: 9, Name: "db", Report: engine.Report{LatencyNanos: 5}},
		{Kind: engine.KindLeaseReleased, Target: 51, Session: 9, Name: "web", Report: engine.Report{LatencyNanos: 5}},
		{Kind: engine.KindLeaseReleased, Target: 52, Name: "db"},
		{Kind: engine.KindLeaseGranted, Target: 53, Session: 9, Name: "db"},
		{Kind: engine.KindLimitSet, Node: 7, Name: "db"},
		{Kind: engine.KindConsumed, Node: 7, Name: "db"},
	})
	if n := r.observed("db"); n != 1 {
		t.Fatalf("%d samples observed, want 1", n)
	}
}

// TestReportsOfTheOldLimitAreDropped: a change of the root's limit on a class
// starts its reports afresh, and releases of leases granted before the
// change are not counted; those granted after it are.
func TestReportsOfTheOldLimitAreDropped(t *testing.T) {
	r := openRig(t, "", dbClass)
	defer r.close()
	released := func(ids ...engine.ID) []*engine.Event {
		var evs []*engine.Event
		for _, id := range ids {
			evs = append(evs, &engine.Event{Kind: engine.KindLeaseReleased, Target: id, Session: 9, Name: "db"})
		}
		return evs
	}
	r.ctl.Observe([]*engine.Event{
		{Kind: engine.KindLeaseGranted, Target: 10, Name: "db"},
		{Kind: engine.KindLeaseGranted, Target: 11, Name: "web"},
	})
	r.ctl.Observe(released(3, 4))
	r.ctl.Observe([]*engine.Event{{Kind: engine.KindLimitSet, Node: engine.RootID, Name: "web"}})
	if n := r.observed("db"); n != 2 {
		t.Fatalf("%d reports after another class's change, want 2", n)
	}
	r.ctl.Observe([]*engine.Event{{Kind: engine.KindLimitSet, Node: engine.RootID, Name: "db"}})
	if n := r.observed("db"); n != 0 {
		t.Fatalf("%d reports kept across a change of the limit, want 0", n)
	}
	r.ctl.Observe(released(10, 11, 5))
	if n := r.observed("db"); n != 0 {
		t.Fatalf("%d reports of leases granted before the change counted, want 0", n)
	}
	r.ctl.Observe([]*engine.Event{{Kind: engine.KindLeaseGranted, Target: 12, Name: "db"}})
	r.ctl.Observe(released(12))
	if n := r.observed("db"); n != 1 {
		t.Fatalf("%d reports of a lease granted after the change, want 1", n)
	}
}

func TestStepUnknownClass(t *testing.T) {
	r := openRig(t, "", dbClass)
	defer r.close()
	if _, err := r.ctl.Step("web"); !errors.Is(err, ErrUnknownClass) {
		t.Fatalf("Step(web) = %v, want ErrUnknownClass", err)
	}
}
