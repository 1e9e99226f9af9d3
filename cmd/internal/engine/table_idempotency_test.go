package engine

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// idemWorld is tenant a (http 100, db 5) with a task and a spare node, a
// session on a and a lease it holds on the task.
type idemWorld struct {
	f                *fixture
	ten, task, spare ID
	s                ID
	lease, lease2    LeaseInfo
	deadline         int64
}

func newIdemWorld(t *testing.T) *idemWorld {
	f := newFixture(t)
	w := &idemWorld{f: f}
	w.ten = f.tenant(Spec{Name: "a", Quotas: map[string]int64{"http": 100}, Limits: map[string]int64{"db": 5}})
	w.s = f.session(w.ten, 0)
	w.task = f.create(w.s, 0, Spec{Name: "task"})
	w.spare = f.create(w.s, 0, Spec{Name: "spare"})
	w.lease = f.grant(w.s, w.task, "db")
	w.lease2 = f.grant(w.s, w.task, "db")
	w.deadline = f.at(time.Hour)
	return w
}

func (w *idemWorld) spec() Spec {
	return Spec{Name: "n", Quotas: map[string]int64{"http": 1}, Limits: map[string]int64{"db": 1},
		Deadline: w.deadline, Weight: 2, Priority: 3}
}

// idemOp is one call; it returns what the call answered.
type idemOp func(w *idemWorld, c *Call) (any, error)

func consumeOp(node func(w *idemWorld) ID, res string, n int64) idemOp {
	return func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.Consume(c, node(w), res, n) }
}

func createOp(edit func(w *idemWorld, s *Spec)) idemOp {
	return func(w *idemWorld, c *Call) (any, error) {
		sp := w.spec()
		edit(w, &sp)
		return w.f.e.Create(c, w.task, sp)
	}
}

func ensureOp(edit func(w *idemWorld, s *Spec), charge *Charge) idemOp {
	return func(w *idemWorld, c *Call) (any, error) {
		sp := w.spec()
		edit(w, &sp)
		inf, created, err := w.f.e.Ensure(c, w.task, sp, charge)
		return fmt.Sprint(inf.ID, created), err
	}
}

func acquireOp(node func(w *idemWorld) ID, class string, hold time.Duration) idemOp {
	return func(w *idemWorld, c *Call) (any, error) {
		l, _, err := w.f.e.Acquire(c, node(w), class, hold)
		return l, err
	}
}

func releaseOp(lease func(w *idemWorld) ID, rep Report) idemOp {
	return func(w *idemWorld, c *Call) (any, error) { return w.f.e.Release(c, lease(w), rep) }
}

func quotaOp(node func(w *idemWorld) ID, res string, v *int64) idemOp {
	return func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.SetQuota(c, node(w), res, v) }
}

func limitOp(node func(w *idemWorld) ID, class string, v *int64) idemOp {
	return func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.SetLimit(c, node(w), class, v) }
}

func defaultsOp(d Defaults) idemOp {
	return func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.SetDefaults(c, w.task, d) }
}

func task(w *idemWorld) ID       { return w.task }
func spare(w *idemWorld) ID      { return w.spare }
func firstLease(w *idemWorld) ID { return w.lease.ID }
func nop(*idemWorld, *Spec)      {}

// TestRequestRepeated checks that a call repeated with its request id returns
// the first answer and changes nothing.
func TestRequestRepeated(t *testing.T) {
	cases := []struct {
		name string
		op   idemOp
	}{
		{"consume", consumeOp(task, "http", 3)},
		{"create", createOp(nop)},
		{"ensure that creates", ensureOp(nop, nil)},
		{"ensure that creates and charges", ensureOp(nop, &Charge{Resource: "http", Amount: 1})},
		{"acquire", acquireOp(task, "db", time.Second)},
		{"release", releaseOp(firstLease, Report{LatencyNanos: 7, Overloaded: true})},
		{"cancel", func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.Cancel(c, w.spare) }},
		{"close", func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.Close(c, w.spare) }},
		{"set quota", quotaOp(task, "http", ptr(4))},
		{"remove quota", quotaOp(task, "http", nil)},
		{"set limit", limitOp(task, "db", ptr(4))},
		{"set defaults", defaultsOp(Defaults{Caps: Caps{Quotas: map[string]int64{"http": 2}}})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newIdemWorld(t)
			seq := w.f.e.Seq()
			first, err := tc.op(w, &Call{Session: w.s, Request: "r1"})
			if err != nil {
				t.Fatal(err)
			}
			if w.f.e.Seq() != seq+1 {
				t.Fatalf("the first call recorded %d events, want 1", w.f.e.Seq()-seq)
			}
			before := w.f.e.Dump()
			again, err := tc.op(w, &Call{Session: w.s, Request: "r1"})
			if err != nil || !reflect.DeepEqual(again, first) {
				t.Fatalf("repeated: %v, %v; want %v", again, err, first)
			}
			sameState(t, w.f.e, before)
		})
	}
}

// TestRequestAppliesNothing checks that a repeated call does not apply again
// even when the state has moved on since the first.
func TestRequestAppliesNothing(t *testing.T) {
	w := newIdemWorld(t)
	c := func(req string) *Call { return &Call{Session: w.s, Request: req} }
	steps := []struct {
		name string
		do   func() error
	}{
		{"set the quota to 5", func() error { return w.f.e.SetQuota(c("q"), w.task, "http", ptr(5)) }},
		{"set it to 7 without an id", func() error { return w.f.e.SetQuota(c(""), w.task, "http", ptr(7)) }},
		{"repeat the first", func() error { return w.f.e.SetQuota(c("q"), w.task, "http", ptr(5)) }},
		{"consume 2", func() error { return w.f.e.Consume(c("c"), w.task, "http", 2) }},
		{"repeat it", func() error { return w.f.e.Consume(c("c"), w.task, "http", 2) }},
		{"consume 2 under another id", func() error { return w.f.e.Consume(c("c2"), w.task, "http", 2) }},
		{"cancel the spare node", func() error { return w.f.e.Cancel(c("x"), w.spare) }},
		{"repeat it", func() error { return w.f.e.Cancel(c("x"), w.spare) }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
	if err := w.f.e.Cancel(c(""), w.spare); !errors.Is(err, ErrNodeEnded) {
		t.Fatalf("cancel again without an id: %v, want %v", err, ErrNodeEnded)
	}
	q := w.f.describe(w.task).Quotas["http"]
	if q.Cap != 7 || q.Used != 4 {
		t.Fatalf("task http: cap %d used %d, want cap 7 used 4", q.Cap, q.Used)
	}
	other := w.f.session(w.ten, 0) // request ids belong to their session
	if err := w.f.e.Consume(&Call{Session: other, Request: "c"}, w.task, "http", 2); err != nil {
		t.Fatal(err)
	}
	if u := w.f.used(w.task, "http"); u != 6 {
		t.Fatalf("another session's id c was not applied: used %d, want 6", u)
	}
}

// TestRequestMismatch checks that a request id reused with any argument
// changed is refused and changes nothing.
func TestRequestMismatch(t *testing.T) {
	spec := func(edit func(w *idemWorld, s *Spec)) func(w *idemWorld, s *Spec) { return edit }
	specEdits := []struct {
		name string
		edit func(w *idemWorld, s *Spec)
	}{
		{"name", spec(func(_ *idemWorld, s *Spec) { s.Name = "m" })},
		{"a quota's value", spec(func(_ *idemWorld, s *Spec) { s.Quotas = map[string]int64{"http": 2} })},
		{"one more quota", spec(func(_ *idemWorld, s *Spec) { s.Quotas["llm"] = 1 })},
		{"no quotas", spec(func(_ *idemWorld, s *Spec) { s.Quotas = nil })},
		{"a quota's resource", spec(func(_ *idemWorld, s *Spec) { s.Quotas = map[string]int64{"llm": 1} })},
		{"a limit's value", spec(func(_ *idemWorld, s *Spec) { s.Limits = map[string]int64{"db": 2} })},
		{"a limit's class", spec(func(_ *idemWorld, s *Spec) { s.Limits = map[string]int64{"gpu": 1} })},
		{"deadline", spec(func(w *idemWorld, s *Spec) { s.Deadline = w.deadline + 1 })},
		{"no deadline", spec(func(_ *idemWorld, s *Spec) { s.Deadline = 0 })},
		{"weight", spec(func(_ *idemWorld, s *Spec) { s.Weight = 1 })},
		{"priority", spec(func(_ *idemWorld, s *Spec) { s.Priority = -3 })},
	}
	type pair struct {
		name          string
		first, second idemOp
	}
	cases := []pair{
		{"consume: node", consumeOp(task, "http", 1), consumeOp(spare, "http", 1)},
		{"consume: resource", consumeOp(task, "http", 1), consumeOp(task, "llm", 1)},
		{"consume: amount", consumeOp(task, "http", 1), consumeOp(task, "http", 2)},
		{"create: parent", createOp(nop), func(w *idemWorld, c *Call) (any, error) {
			return w.f.e.Create(c, w.spare, w.spec())
		}},
		{"create, then ensure", createOp(nop), ensureOp(nop, nil)},
		{"ensure: a charge", ensureOp(nop, nil), ensureOp(nop, &Charge{Resource: "http", Amount: 1})},
		{"ensure: no charge", ensureOp(nop, &Charge{Resource: "http", Amount: 1}), ensureOp(nop, nil)},
		{"ensure: charge amount", ensureOp(nop, &Charge{Resource: "http", Amount: 1}), ensureOp(nop, &Charge{Resource: "http", Amount: 2})},
		{"ensure: charge resource", ensureOp(nop, &Charge{Resource: "http", Amount: 1}), ensureOp(nop, &Charge{Resource: "llm", Amount: 1})},
		{"acquire: node", acquireOp(task, "db", 0), acquireOp(spare, "db", 0)},
		{"acquire: class", acquireOp(task, "db", 0), acquireOp(task, "gpu", 0)},
		{"acquire: max hold", acquireOp(task, "db", time.Second), acquireOp(task, "db", 2*time.Second)},
		{"acquire: no max hold", acquireOp(task, "db", time.Second), acquireOp(task, "db", 0)},
		{"release: lease", releaseOp(firstLease, Report{}), releaseOp(func(w *idemWorld) ID { return w.lease2.ID }, Report{})},
		{"release: latency", releaseOp(firstLease, Report{LatencyNanos: 5}), releaseOp(firstLease, Report{LatencyNanos: 6})},
		{"release: overloaded", releaseOp(firstLease, Report{}), releaseOp(firstLease, Report{Overloaded: true})},
		{"cancel: node", func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.Cancel(c, w.spare) },
			func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.Cancel(c, w.task) }},
		{"cancel, then close", func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.Cancel(c, w.spare) },
			func(w *idemWorld, c *Call) (any, error) { return nil, w.f.e.Close(c, w.spare) }},
		{"set quota: value", quotaOp(task, "http", ptr(5)), quotaOp(task, "http", ptr(6))},
		{"set quota: removed", quotaOp(task, "http", ptr(5)), quotaOp(task, "http", nil)},
		{"set quota: resource", quotaOp(task, "http", ptr(5)), quotaOp(task, "llm", ptr(5))},
		{"set quota: node", quotaOp(task, "http", ptr(5)), quotaOp(spare, "http", ptr(5))},
		{"set quota, then limit", quotaOp(task, "db", ptr(5)), limitOp(task, "db", ptr(5))},
		{"set limit: value", limitOp(task, "db", ptr(5)), limitOp(task, "db", ptr(6))},
		{"set defaults: quotas", defaultsOp(Defaults{Caps: Caps{Quotas: map[string]int64{"http": 2}}}),
			defaultsOp(Defaults{Caps: Caps{Quotas: map[string]int64{"http": 3}}})},
		{"set defaults: limits", defaultsOp(Defaults{Caps: Caps{Limits: map[string]int64{"db": 2}}}),
			defaultsOp(Defaults{Caps: Caps{Limits: map[string]int64{"db": 3}}})},
		{"set defaults: children", defaultsOp(Defaults{}), defaultsOp(Defaults{Children: &Caps{}})},
		{"set defaults: children's quotas", defaultsOp(Defaults{Children: &Caps{Quotas: map[string]int64{"http": 1}}}),
			defaultsOp(Defaults{Children: &Caps{Quotas: map[string]int64{"http": 2}}})},
		{"set defaults: children's limits", defaultsOp(Defaults{Children: &Caps{Limits: map[string]int64{"db": 1}}}),
			defaultsOp(Defaults{Children: &Caps{Limits: map[string]int64{"db": 2}}})},
		{"consume, then create", consumeOp(task, "http", 1), createOp(nop)},
	}
	for _, se := range specEdits {
		cases = append(cases,
			pair{"create: " + se.name, createOp(nop), createOp(se.edit)},
			pair{"ensure: " + se.name, ensureOp(nop, nil), ensureOp(se.edit, nil)})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newIdemWorld(t)
			if _, err := tc.first(w, &Call{Session: w.s, Request: "r1"}); err != nil {
				t.Fatal(err)
			}
			before := w.f.e.Dump()
			if _, err := tc.second(w, &Call{Session: w.s, Request: "r1"}); !errors.Is(err, ErrRequestMismatch) {
				t.Fatalf("got %v, want %v", err, ErrRequestMismatch)
			}
			sameState(t, w.f.e, before)
		})
	}
}

// TestEnsure checks find-or-create: the newest child of the name is returned
// even if it has ended, until the retention has passed; a charge is taken in
// the same step as the creation, and a denied charge creates nothing.
func TestEnsure(t *testing.T) {
	newWorld := func(t *testing.T) *idemWorld {
		w := newIdemWorld(t)
		if err := w.f.e.Configure(w.f.sys(), Settings{TombstoneTTL: time.Minute, NodeRetention: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	ensure := func(w *idemWorld, name string, charge *Charge) (NodeInfo, bool, error) {
		return w.f.e.Ensure(&Call{Session: w.s}, w.task, Spec{Name: name}, charge)
	}
	t.Run("returns the newest of the name, even ended", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		old := w.f.create(w.s, w.task, Spec{Name: "x"})
		newer := w.f.create(w.s, w.task, Spec{Name: "x"})
		if err := w.f.e.Cancel(&Call{Session: w.s}, newer); err != nil {
			t.Fatal(err)
		}
		seq := w.f.e.Seq()
		inf, created, err := ensure(w, "x", &Charge{Resource: "http", Amount: 1})
		if err != nil || created || inf.ID != newer || inf.State != Cancelled {
			t.Fatalf("ensure: %d %s created=%v %v; want %d cancelled (not %d)", inf.ID, inf.State, created, err, newer, old)
		}
		if w.f.e.Seq() != seq || w.f.used(w.task, "http") != 0 {
			t.Fatal("ensure of an existing child changed something")
		}
	})
	for _, reap := range []bool{false, true} {
		t.Run(fmt.Sprint("after the retention a new one, reap=", reap), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			x := w.f.create(w.s, w.task, Spec{Name: "x"})
			if err := w.f.e.Close(&Call{Session: w.s}, x); err != nil {
				t.Fatal(err)
			}
			w.f.clock.Advance(10*time.Second - 1)
			if inf, created, err := ensure(w, "x", nil); err != nil || created || inf.ID != x || inf.State != Done {
				t.Fatalf("just before the retention: %d %s created=%v %v; want %d done", inf.ID, inf.State, created, err, x)
			}
			w.f.clock.Advance(1)
			if reap {
				w.f.e.Reap(w.f.sys())
			}
			next := w.f.e.Dump().Next
			inf, created, err := ensure(w, "x", nil)
			if err != nil || !created || inf.ID != next || inf.State != Active {
				t.Fatalf("once the retention passed: %d %s created=%v %v; want a new node %d", inf.ID, inf.State, created, err, next)
			}
			if again, created, err := ensure(w, "x", nil); err != nil || created || again.ID != inf.ID {
				t.Fatalf("ensure again: %d created=%v %v; want %d", again.ID, created, err, inf.ID)
			}
		})
	}
	t.Run("charges the parent in the same step", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		seq := w.f.e.Seq()
		inf, created, err := ensure(w, "y", &Charge{Resource: "http", Amount: 1})
		if err != nil || !created {
			t.Fatalf("ensure: %v created=%v", err, created)
		}
		if w.f.e.Seq() != seq+1 {
			t.Fatalf("ensure recorded %d events, want 1", w.f.e.Seq()-seq)
		}
		for _, id := range []ID{w.task, w.ten, RootID} {
			if u := w.f.used(id, "http"); u != 1 {
				t.Fatalf("node %d used %d, want 1", id, u)
			}
		}
		if u := w.f.used(inf.ID, "http"); u != 0 {
			t.Fatalf("the new child used %d, want 0", u)
		}
	})
	t.Run("a denied charge creates nothing", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.f.consume(w.s, w.task, "http", 100)
		before := w.f.e.Dump()
		_, _, err := ensure(w, "z", &Charge{Resource: "http", Amount: 1})
		var d *DeniedError
		if !errors.As(err, &d) || d.Node != w.ten || d.Requested != 1 {
			t.Fatalf("got %v, want the tenant's denial", err)
		}
		sameState(t, w.f.e, before)
		if inf := w.f.describe(w.task); inf.Children != 0 {
			t.Fatalf("task has %d children, want 0", inf.Children)
		}
	})
}
