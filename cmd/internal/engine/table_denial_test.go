package engine

import (
	"errors"
	"testing"
)

// denialWorld is root (http cap 20) > tenants a (cap 10) and b (no cap);
// a > t1 (cap 4), t2 (no cap), t3 (cap 5) > s1, s2; b > u. It returns the
// ids by name and a session scoped to a.
func denialWorld(f *fixture) (map[string]ID, ID) {
	if err := f.e.SetQuota(f.sys(), RootID, "http", ptr(20)); err != nil {
		f.t.Fatal(err)
	}
	ids := map[string]ID{"root": RootID}
	ids["a"] = f.tenant(Spec{Name: "a", Quotas: map[string]int64{"http": 10}})
	ids["b"] = f.tenant(Spec{Name: "b"})
	ids["t1"] = f.sysCreate(ids["a"], Spec{Name: "t1", Quotas: map[string]int64{"http": 4}})
	ids["t2"] = f.sysCreate(ids["a"], Spec{Name: "t2"})
	ids["t3"] = f.sysCreate(ids["a"], Spec{Name: "t3", Quotas: map[string]int64{"http": 5}})
	ids["s1"] = f.sysCreate(ids["t3"], Spec{Name: "s1"})
	ids["s2"] = f.sysCreate(ids["t3"], Spec{Name: "s2"})
	ids["u"] = f.sysCreate(ids["b"], Spec{Name: "u"})
	return ids, f.session(ids["a"], 0)
}

// TestDenialContents checks that a denial names the lowest cap on the chain
// that has no room, with its node, usage, limit, the amount asked and the
// largest consumer beneath it, and that nothing is charged anywhere; and
// that a cap above the caller's scope is told only as a shared budget spent,
// with no node, figures or consumer, while the daemon sees it whole.
func TestDenialContents(t *testing.T) {
	type spend struct {
		node string
		n    int64
	}
	cases := []struct {
		name    string
		spent   []spend // charged first, by the daemon
		at      string  // the consume that is denied
		n       int64
		node    string // want: the node whose cap was hit
		used    int64
		limit   int64
		largest string // want: the largest consumer beneath, by name
		top     int64  // and what it used
		daemon  bool   // the daemon consumes, not a's session
		shared  bool   // want: a shared budget spent, nothing more
	}{
		{name: "task cap, no children, nothing used", at: "t1", n: 5,
			node: "t1", used: 0, limit: 4, largest: "t1", top: 0},
		{name: "task cap, no children", spent: []spend{{"t1", 4}}, at: "t1", n: 1,
			node: "t1", used: 4, limit: 4, largest: "t1", top: 4},
		{name: "task cap, with children", spent: []spend{{"s1", 1}, {"s2", 3}, {"t3", 1}}, at: "s1", n: 1,
			node: "t3", used: 5, limit: 5, largest: "s2", top: 3},
		{name: "task cap, the larger child overtaken", spent: []spend{{"s2", 2}, {"s1", 1}, {"s1", 2}}, at: "s2", n: 1,
			node: "t3", used: 5, limit: 5, largest: "s1", top: 3},
		{name: "tenant cap", spent: []spend{{"t2", 6}, {"t1", 3}}, at: "t2", n: 2,
			node: "a", used: 9, limit: 10, largest: "t2", top: 6},
		{name: "tenant cap, hit from a grandchild", spent: []spend{{"t2", 4}, {"s1", 5}}, at: "t2", n: 2,
			node: "a", used: 9, limit: 10, largest: "t3", top: 5},
		{name: "root cap, seen by the daemon", spent: []spend{{"t2", 6}, {"t1", 3}, {"u", 11}}, at: "t2", n: 1, daemon: true,
			node: "root", used: 20, limit: 20, largest: "b", top: 11},
		{name: "root cap, seen by the tenant", spent: []spend{{"t2", 6}, {"t1", 3}, {"u", 11}}, at: "t2", n: 1, shared: true},
		{name: "the lowest full cap is named", spent: []spend{{"t1", 4}, {"t2", 6}}, at: "t1", n: 1,
			node: "t1", used: 4, limit: 4, largest: "t1", top: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ids, sess := denialWorld(f)
			for _, s := range tc.spent {
				f.consume(0, ids[s.node], "http", s.n)
			}
			usage := make(map[string]int64, len(ids))
			for name, id := range ids {
				usage[name] = f.used(id, "http")
			}
			before := f.e.Dump()

			c := &Call{Session: sess}
			if tc.daemon {
				c = f.sys()
			}
			err := f.e.Consume(c, ids[tc.at], "http", tc.n)
			var d *DeniedError
			if !errors.As(err, &d) || !errors.Is(err, ErrDenied) {
				t.Fatalf("got %v, want a denial", err)
			}
			want := DeniedError{
				Node: ids[tc.node], NodeName: tc.node, Resource: "http",
				Used: tc.used, Limit: tc.limit, Requested: tc.n,
				Largest: Consumer{Node: ids[tc.largest], Name: tc.largest, Used: tc.top},
			}
			if tc.shared {
				want = DeniedError{Resource: "http", Requested: tc.n, Shared: true}
			}
			if *d != want {
				t.Fatalf("denial\n got  %+v\n want %+v", *d, want)
			}
			for name, id := range ids {
				if u := f.used(id, "http"); u != usage[name] {
					t.Errorf("%s used %d after the denial, %d before", name, u, usage[name])
				}
			}
			sameState(t, f.e, before)
		})
	}
}

// TestTightestStaysInScope checks that the tightest cap an admitted consume
// or a peek reports is the tightest in the caller's scope: a tenant is not
// told the root's remaining, however tight; the daemon is.
func TestTightestStaysInScope(t *testing.T) {
	f := newFixture(t)
	ids, sess := denialWorld(f)
	f.consume(0, ids["u"], "http", 11) // the root has 9 left, tenant a 10
	for _, tc := range []struct {
		name string
		c    *Call
		n    int64
		want Tightest
	}{
		{"tenant a's peek", &Call{Session: sess}, 0, Tightest{Capped: true, Node: ids["a"], Limit: 10, Remaining: 10}},
		{"tenant a's consume", &Call{Session: sess}, 1, Tightest{Capped: true, Node: ids["a"], Limit: 10, Remaining: 9}},
		{"the daemon's peek", f.sys(), 0, Tightest{Capped: true, Node: RootID, Limit: 20, Remaining: 8}},
	} {
		res, err := f.e.ConsumeWith(tc.c, ids["t2"], "http", tc.n, ConsumeOptions{})
		must(t, err)
		if res.Tightest != tc.want {
			t.Errorf("%s: tightest %+v; want %+v", tc.name, res.Tightest, tc.want)
		}
	}
}
