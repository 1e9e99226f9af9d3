package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// scopeWorld is tenants a and b, each with a task and a subtask, a session
// on each tenant and one on a's task; b's session holds a lease on b's task.
type scopeWorld struct {
	f              *fixture
	a, aTask       ID
	b, bTask, bSub ID
	sa, sb, saTask ID
	bLease         LeaseInfo
}

func newScopeWorld(t *testing.T) *scopeWorld {
	f := newFixture(t)
	w := &scopeWorld{f: f}
	w.a = f.tenant(Spec{Name: "a", Quotas: map[string]int64{"http": 10}, Limits: map[string]int64{"db": 1}})
	w.b = f.tenant(Spec{Name: "b", Quotas: map[string]int64{"http": 10}, Limits: map[string]int64{"db": 1}})
	w.sa, w.sb = f.session(w.a, time.Hour), f.session(w.b, time.Hour)
	w.aTask = f.create(w.sa, 0, Spec{Name: "task"})
	f.create(w.sa, w.aTask, Spec{Name: "sub"})
	w.bTask = f.create(w.sb, 0, Spec{Name: "task"})
	w.bSub = f.create(w.sb, w.bTask, Spec{Name: "sub"})
	w.saTask = f.session(w.aTask, time.Hour)
	w.bLease = f.grant(w.sb, w.bTask, "db")
	return w
}

// TestOutsideScope checks that every call naming a node outside the caller's
// scope is refused with ErrNotFound, word for word as for an id never
// issued, so that no call tells another tenant's node from an unused id,
// and changes nothing at all, request ids included; and that a lease outside
// the scope is unknown to it.
func TestOutsideScope(t *testing.T) {
	type op func(w *scopeWorld, c *Call, id ID) error
	ops := []struct {
		name string
		op   op
	}{
		{"consume", func(w *scopeWorld, c *Call, id ID) error { return w.f.e.Consume(c, id, "http", 1) }},
		{"acquire", func(w *scopeWorld, c *Call, id ID) error {
			_, _, err := w.f.e.Acquire(c, id, "db", time.Second)
			return err
		}},
		{"create", func(w *scopeWorld, c *Call, id ID) error {
			_, err := w.f.e.Create(c, id, Spec{Name: "x"})
			return err
		}},
		{"ensure an existing name", func(w *scopeWorld, c *Call, id ID) error {
			_, _, err := w.f.e.Ensure(c, id, Spec{Name: "task"}, nil)
			return err
		}},
		{"ensure with a charge", func(w *scopeWorld, c *Call, id ID) error {
			_, _, err := w.f.e.Ensure(c, id, Spec{Name: "y"}, &Charge{Resource: "http", Amount: 1})
			return err
		}},
		{"cancel", func(w *scopeWorld, c *Call, id ID) error { return w.f.e.Cancel(c, id) }},
		{"close", func(w *scopeWorld, c *Call, id ID) error { return w.f.e.Close(c, id) }},
		{"describe", func(w *scopeWorld, c *Call, id ID) error {
			_, _, _, err := w.f.e.Describe(c, id, &Page{})
			return err
		}},
		{"set quota", func(w *scopeWorld, c *Call, id ID) error { return w.f.e.SetQuota(c, id, "http", ptr(1)) }},
		{"remove quota", func(w *scopeWorld, c *Call, id ID) error { return w.f.e.SetQuota(c, id, "http", nil) }},
		{"set limit", func(w *scopeWorld, c *Call, id ID) error { return w.f.e.SetLimit(c, id, "db", ptr(9)) }},
		{"set defaults", func(w *scopeWorld, c *Call, id ID) error {
			return w.f.e.SetDefaults(c, id, Defaults{Caps: Caps{Quotas: map[string]int64{"http": 1}}})
		}},
	}
	targets := []struct {
		name   string
		caller func(w *scopeWorld) ID
		target func(w *scopeWorld) ID
	}{
		{"a names tenant b", func(w *scopeWorld) ID { return w.sa }, func(w *scopeWorld) ID { return w.b }},
		{"a names b's task", func(w *scopeWorld) ID { return w.sa }, func(w *scopeWorld) ID { return w.bTask }},
		{"a names b's subtask", func(w *scopeWorld) ID { return w.sa }, func(w *scopeWorld) ID { return w.bSub }},
		{"a names the root", func(w *scopeWorld) ID { return w.sa }, func(w *scopeWorld) ID { return RootID }},
		{"a's task names tenant a", func(w *scopeWorld) ID { return w.saTask }, func(w *scopeWorld) ID { return w.a }},
		{"a's task names b's task", func(w *scopeWorld) ID { return w.saTask }, func(w *scopeWorld) ID { return w.bTask }},
	}
	for _, tg := range targets {
		for _, o := range ops {
			t.Run(tg.name+"/"+o.name, func(t *testing.T) {
				t.Parallel()
				w := newScopeWorld(t)
				before := w.f.e.Dump()
				c := &Call{Session: tg.caller(w), Request: "req-1"}
				err := o.op(w, c, tg.target(w))
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("got %v, want %v", err, ErrNotFound)
				}
				sameState(t, w.f.e, before)
				unused := o.op(w, &Call{Session: tg.caller(w), Request: "req-2"}, 1<<40)
				if fmt.Sprintf("%#v", unused) != fmt.Sprintf("%#v", err) {
					t.Fatalf("a node outside the scope answers %#v, an unused id %#v", err, unused)
				}
			})
		}
	}
	t.Run("a lease of b is unknown to a", func(t *testing.T) {
		t.Parallel()
		w := newScopeWorld(t)
		before := w.f.e.Dump()
		_, err := w.f.e.Release(&Call{Session: w.sa, Request: "req-1"}, w.bLease.ID, Report{})
		leaseErr(t, err, w.bLease.ID, OutcomeUnknown)
		_, err = w.f.e.Validate(&Call{Session: w.sa}, w.bLease.ID)
		leaseErr(t, err, w.bLease.ID, OutcomeUnknown)
		sameState(t, w.f.e, before)
	})
}

// TestNodeZeroIsScope checks that a session naming node 0 names its scope.
func TestNodeZeroIsScope(t *testing.T) {
	w := newScopeWorld(t)
	f := w.f
	for _, sc := range []struct {
		name  string
		sess  ID
		scope ID
	}{{"tenant session", w.sa, w.a}, {"task session", w.saTask, w.aTask}} {
		c := &Call{Session: sc.sess}
		inf, _, _, err := f.e.Describe(c, 0, nil)
		if err != nil || inf.ID != sc.scope {
			t.Fatalf("%s: describe 0 gave %d, %v; want %d", sc.name, inf.ID, err, sc.scope)
		}
		before := f.used(sc.scope, "http")
		if err := f.e.Consume(c, 0, "http", 1); err != nil || f.used(sc.scope, "http") != before+1 {
			t.Fatalf("%s: consume on 0: %v, used %d, want %d", sc.name, err, f.used(sc.scope, "http"), before+1)
		}
		child, err := f.e.Create(c, 0, Spec{Name: "child"})
		if err != nil || child.Parent != sc.scope {
			t.Fatalf("%s: create under 0: parent %d, %v; want %d", sc.name, child.Parent, err, sc.scope)
		}
		l, _, err := f.e.Acquire(c, 0, "gpu", 0)
		if err != nil || l.Node != sc.scope {
			t.Fatalf("%s: acquire on 0: node %d, %v; want %d", sc.name, l.Node, err, sc.scope)
		}
	}
	if _, _, _, err := f.e.Describe(f.sys(), 0, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the daemon's node 0: %v, want %v", err, ErrNotFound)
	}
}
