package engine

import (
	"errors"
	"maps"
	"reflect"
	"testing"
)

// caps returns the quotas and limits a node has set, without usage.
func caps(inf NodeInfo) Caps {
	var c Caps
	for r, q := range inf.Quotas {
		if q.Capped {
			if c.Quotas == nil {
				c.Quotas = map[string]int64{}
			}
			c.Quotas[r] = q.Cap
		}
	}
	for k, l := range inf.Limits {
		if l.Limited {
			if c.Limits == nil {
				c.Limits = map[string]int64{}
			}
			c.Limits[k] = l.Limit
		}
	}
	return c
}

// TestDefaults checks what a node starts with: its parent's defaults where
// its spec is silent, its spec where it speaks, and as its own defaults the
// parent's children defaults. Defaults changed later shape only nodes created
// afterwards.
func TestDefaults(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Quotas: map[string]int64{"http": 100}})
	s := f.session(ten, 0)
	first := Defaults{
		Caps:     Caps{Quotas: map[string]int64{"http": 10, "llm": 5}, Limits: map[string]int64{"db": 2}},
		Children: &Caps{Quotas: map[string]int64{"http": 3}, Limits: map[string]int64{"db": 1}},
	}
	if err := f.e.SetDefaults(&Call{Session: s}, 0, first); err != nil {
		t.Fatalf("a tenant's session sets its own scope's defaults: %v", err)
	}
	first.Quotas["http"] = 99 // the engine keeps its own copy
	run := f.create(s, 0, Spec{Name: "run", Quotas: map[string]int64{"http": 7}})
	agent := f.create(s, run, Spec{Name: "agent"})
	tool := f.create(s, agent, Spec{Name: "tool"})
	bare := f.create(s, agent, Spec{Name: "bare", Limits: map[string]int64{"gpu": 0}})

	second := Defaults{Caps: Caps{Quotas: map[string]int64{"http": 20}}}
	if err := f.e.SetDefaults(&Call{Session: s}, ten, second); err != nil {
		t.Fatal(err)
	}
	run2 := f.create(s, 0, Spec{Name: "run2"})
	agent2 := f.create(s, run, Spec{Name: "agent2"})

	rows := []struct {
		name     string
		id       ID
		caps     Caps
		defaults Defaults
	}{
		{"the tenant keeps its own caps", ten, Caps{Quotas: map[string]int64{"http": 100}},
			Defaults{Caps: Caps{Quotas: map[string]int64{"http": 20}}}},
		{"a child: spec wins, defaults fill in", run,
			Caps{Quotas: map[string]int64{"http": 7, "llm": 5}, Limits: map[string]int64{"db": 2}},
			Defaults{Caps: Caps{Quotas: map[string]int64{"http": 3}, Limits: map[string]int64{"db": 1}}}},
		{"a grandchild gets the children defaults", agent,
			Caps{Quotas: map[string]int64{"http": 3}, Limits: map[string]int64{"db": 1}}, Defaults{}},
		{"a great-grandchild gets nothing", tool, Caps{}, Defaults{}},
		{"a zero limit in a spec is a limit", bare, Caps{Limits: map[string]int64{"gpu": 0}}, Defaults{}},
		{"a child created after the change", run2, Caps{Quotas: map[string]int64{"http": 20}}, Defaults{}},
		{"a grandchild under an old child keeps the old children defaults", agent2,
			Caps{Quotas: map[string]int64{"http": 3}, Limits: map[string]int64{"db": 1}}, Defaults{}},
	}
	for _, r := range rows {
		inf := f.describe(r.id)
		if got := caps(inf); !reflect.DeepEqual(got, r.caps) {
			t.Errorf("%s: caps %+v, want %+v", r.name, got, r.caps)
		}
		if !reflect.DeepEqual(inf.Defaults, r.defaults) {
			t.Errorf("%s: defaults %+v, want %+v", r.name, inf.Defaults, r.defaults)
		}
	}
}

// TestEditScope checks who may edit which caps: anything inside the session's
// scope except the scope node itself, whose defaults it may still set; a
// session scoped to the root may edit the root; the daemon may edit anything.
func TestEditScope(t *testing.T) {
	type edit func(f *fixture, c *Call, id ID) error
	quota := func(f *fixture, c *Call, id ID) error { return f.e.SetQuota(c, id, "http", ptr(5)) }
	limit := func(f *fixture, c *Call, id ID) error { return f.e.SetLimit(c, id, "db", ptr(5)) }
	defaults := func(f *fixture, c *Call, id ID) error {
		return f.e.SetDefaults(c, id, Defaults{Caps: Caps{Quotas: map[string]int64{"http": 5}}})
	}
	cancel := func(f *fixture, c *Call, id ID) error { return f.e.Cancel(c, id) }
	cases := []struct {
		name   string
		scope  string // "" is the daemon
		op     edit
		target string
		want   error
	}{
		{"tenant sets its own defaults", "tenant", defaults, "tenant", nil},
		{"tenant sets its own defaults as node 0", "tenant", defaults, "0", nil},
		{"tenant sets its own quota", "tenant", quota, "tenant", ErrForbidden},
		{"tenant sets its own quota as node 0", "tenant", quota, "0", ErrForbidden},
		{"tenant sets its own limit", "tenant", limit, "tenant", ErrForbidden},
		{"tenant cancels itself", "tenant", cancel, "tenant", ErrForbidden},
		{"tenant sets a task's quota", "tenant", quota, "task", nil},
		{"tenant sets a task's limit", "tenant", limit, "task", nil},
		{"tenant sets a task's defaults", "tenant", defaults, "task", nil},
		{"tenant sets a subtask's quota", "tenant", quota, "sub", nil},
		{"tenant sets the root's quota", "tenant", quota, "root", ErrNotFound},
		{"tenant sets the root's defaults", "tenant", defaults, "root", ErrNotFound},
		{"task sets its tenant's quota", "task", quota, "tenant", ErrNotFound},
		{"task sets its own limit", "task", limit, "task", ErrForbidden},
		{"task sets its own defaults", "task", defaults, "task", nil},
		{"task sets a subtask's limit", "task", limit, "sub", nil},
		{"root session sets the root's quota", "root", quota, "root", nil},
		{"root session sets the root's limit", "root", limit, "root", nil},
		{"root session sets the root's defaults", "root", defaults, "0", nil},
		{"root session sets a tenant's quota", "root", quota, "tenant", nil},
		{"root session cancels the root", "root", cancel, "root", ErrForbidden},
		{"daemon sets the root's limit", "", limit, "root", nil},
		{"daemon sets a tenant's quota", "", quota, "tenant", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ids := map[string]ID{"root": RootID, "0": 0}
			ids["tenant"] = f.tenant(Spec{Name: "a"})
			ids["task"] = f.sysCreate(ids["tenant"], Spec{Name: "task"})
			ids["sub"] = f.sysCreate(ids["task"], Spec{Name: "sub"})
			c := &Call{}
			if tc.scope != "" {
				c.Session = f.session(ids[tc.scope], 0)
			}
			before := f.e.Dump()
			err := tc.op(f, c, ids[tc.target])
			if !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if tc.want != nil {
				sameState(t, f.e, before)
				return
			}
			if c.Seq != before.Seq+1 {
				t.Fatalf("an edit recorded %d events, want 1", c.Seq-before.Seq)
			}
		})
	}
}

// TestCallerMapsCopied checks that the maps a caller passes in and the ones
// Describe hands out are not the engine's own or its events': changing them
// afterwards changes nothing.
func TestCallerMapsCopied(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	d := Defaults{Caps: Caps{Quotas: map[string]int64{"http": 1}}}
	if err := f.e.SetDefaults(f.sys(), ten, d); err != nil {
		t.Fatal(err)
	}
	got := f.describe(ten).Defaults
	got.Quotas["http"] = 50
	d.Quotas["http"] = 60
	spec := Spec{Name: "c", Quotas: map[string]int64{"llm": 2}, Limits: map[string]int64{"db": 3}}
	child := f.sysCreate(ten, spec)
	ev := f.rec.events[len(f.rec.events)-1]
	spec.Quotas["llm"], spec.Limits["db"] = 70, 80
	if q := caps(f.describe(child)); !reflect.DeepEqual(q, Caps{
		Quotas: map[string]int64{"http": 1, "llm": 2}, Limits: map[string]int64{"db": 3},
	}) {
		t.Fatalf("child caps %+v, want http 1, llm 2, db 3", q)
	}
	if !maps.Equal(ev.Spec.Quotas, map[string]int64{"llm": 2}) || !maps.Equal(ev.Spec.Limits, map[string]int64{"db": 3}) {
		t.Fatalf("the recorded spec changed with the caller's maps: %+v", *ev.Spec)
	}
	charge := &Charge{Resource: "http", Amount: 1}
	if _, _, err := f.e.Ensure(f.sys(), ten, Spec{Name: "e"}, charge); err != nil {
		t.Fatal(err)
	}
	ev = f.rec.events[len(f.rec.events)-1]
	charge.Amount = 90
	if *ev.Charge != (Charge{Resource: "http", Amount: 1}) {
		t.Fatalf("the recorded charge changed with the caller's: %+v", *ev.Charge)
	}
}
