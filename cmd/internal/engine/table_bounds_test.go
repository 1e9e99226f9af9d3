package engine

import (
	"errors"
	"testing"
	"time"
)

// boundFixture is an engine with two tenants: "tight", held to small
// bounds, and "roomy", on the defaults. "quota" is a declared name.
type boundFixture struct {
	*fixture
	tight, roomy ID
	ts, rs       ID // a session on each
	cfg          BoundsConfig
}

func newBoundFixture(t *testing.T, b Bounds) *boundFixture {
	f := &boundFixture{fixture: newFixture(t)}
	f.tight = f.tenant(Spec{Name: "tight"})
	f.roomy = f.tenant(Spec{Name: "roomy"})
	f.cfg = BoundsConfig{Default: DefaultBounds(), PerTenant: map[ID]Bounds{f.tight: b}, Declared: []string{"quota"}}
	must(t, f.e.SetBounds(f.cfg))
	f.ts, f.rs = f.session(f.tight, 0), f.session(f.roomy, 0)
	return f
}

// roomy returns bounds of 100 but for b, which is n.
func roomy(b Bound, n int64) Bounds {
	out := Bounds{100, 100, 100, 100, 100}
	out[b] = n
	return out
}

// refused checks that err is a *BoundError of bound b at held of limit, and
// that the engine's state and record are what they were.
func (f *boundFixture) refused(err error, b Bound, held, limit int64, before *Snapshot, seq uint64) {
	f.t.Helper()
	var be *BoundError
	if !errors.As(err, &be) || be.Bound != b || be.Held != held || be.Limit != limit || be.Tenant != "tight" {
		f.t.Fatalf("got %v, want tenant \"tight\" refused at %s %d of %d", err, b, held, limit)
	}
	sameState(f.t, f.e, before)
	if f.e.Seq() != seq {
		f.t.Fatalf("a refused call recorded events %d to %d", seq+1, f.e.Seq())
	}
	if f.e.Bounds()[0].Refused[b] == 0 {
		f.t.Fatalf("the refusal was not counted")
	}
}

// try runs call, expects it refused by b at held of limit with nothing
// changed, and checks that the roomy tenant is not refused the same call.
func (f *boundFixture) try(b Bound, held, limit int64, call func(sess, scope ID) error) {
	f.t.Helper()
	before, seq := f.e.Dump(), f.e.Seq()
	f.refused(call(f.ts, f.tight), b, held, limit, before, seq)
	if err := call(f.rs, f.roomy); err != nil {
		f.t.Fatalf("the roomy tenant was refused too: %v", err)
	}
}

func TestBoundNodes(t *testing.T) {
	f := newBoundFixture(t, roomy(BoundNodes, 2))
	a := f.create(f.ts, f.tight, Spec{Name: "a"})
	f.create(f.ts, a, Spec{Name: "b"})
	create := func(sess, scope ID) error {
		_, err := f.e.Create(&Call{Session: sess}, scope, Spec{Name: "c"})
		return err
	}
	f.try(BoundNodes, 2, 2, create)
	f.try(BoundNodes, 2, 2, func(sess, scope ID) error {
		_, _, err := f.e.Ensure(&Call{Session: sess}, scope, Spec{Name: "d"}, &Charge{Resource: "quota", Amount: 1})
		return err
	})
	must(t, f.e.Cancel(&Call{Session: f.ts}, a))
	f.try(BoundNodes, 2, 2, create) // an ended node counts until it is removed
	f.clock.Advance(f.e.Settings().NodeRetention + time.Second)
	f.e.Reap(&Call{})
	must(t, create(f.ts, f.tight))
}

func TestBoundKeys(t *testing.T) {
	f := newBoundFixture(t, roomy(BoundNodes, 3))
	keyed := func(key string) func(sess, scope ID) error {
		return func(sess, scope ID) error {
			k := KeyedLimit{Parent: scope, Group: "g", Key: key, Resource: "quota", Rate: Rate{Limit: 5, Period: time.Second}}
			_, err := f.e.ConsumeKeyed(&Call{Session: sess}, k, 1, ConsumeOptions{})
			return err
		}
	}
	must(t, keyed("k1")(f.ts, f.tight)) // the group and its first key
	must(t, keyed("k2")(f.ts, f.tight))
	f.try(BoundNodes, 3, 3, keyed("k3"))
	must(t, keyed("k1")(f.ts, f.tight)) // a key it holds still answers
	set := f.e.Settings()
	set.KeyIdle = time.Second
	must(t, f.e.Configure(&Call{}, set))
	f.clock.Advance(time.Minute)
	f.e.Reap(&Call{}) // forgets the idle keys
	must(t, keyed("k3")(f.ts, f.tight))
}

func TestBoundNames(t *testing.T) {
	f := newBoundFixture(t, roomy(BoundNames, 3))
	n := f.create(f.ts, f.tight, Spec{Name: "n", Limits: map[string]int64{"capped": 9}})
	f.consume(f.ts, n, "one", 1)
	f.grant(f.ts, n, "one") // a class apart from the resource of the same name
	f.consume(f.ts, n, "quota", 1)
	f.consume(f.rs, f.roomy, "other", 1) // another tenant's names are its own
	calls := map[string]func(sess, scope ID) error{
		"consume": func(sess, scope ID) error { return f.e.Consume(&Call{Session: sess}, scope, "two", 1) },
		"acquire": func(sess, scope ID) error {
			_, _, err := f.e.Acquire(&Call{Session: sess}, scope, "two", 0)
			return err
		},
		"set quota": func(sess, scope ID) error { return f.e.SetQuota(&Call{Session: sess}, scope, "two", ptr(1)) },
		"set limit": func(sess, scope ID) error { return f.e.SetLimit(&Call{Session: sess}, scope, "two", ptr(1)) },
		"set rate": func(sess, scope ID) error {
			return f.e.SetRate(&Call{Session: sess}, scope, "two", &Rate{Limit: 1, Period: time.Second})
		},
		"create": func(sess, scope ID) error {
			_, err := f.e.Create(&Call{Session: sess}, scope, Spec{Name: "m", Limits: map[string]int64{"two": 1}})
			return err
		},
		"ensure with a charge": func(sess, scope ID) error {
			_, _, err := f.e.Ensure(&Call{Session: sess}, scope, Spec{Name: "e"}, &Charge{Resource: "two", Amount: 1})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			f.t = t
			scope := map[ID]ID{f.ts: n, f.rs: f.create(f.rs, f.roomy, Spec{Name: name})}
			f.try(BoundNames, 3, 3, func(sess, _ ID) error { return call(sess, scope[sess]) })
		})
	}
	f.t = t
	f.consume(f.ts, n, "one", 1) // names it holds are no new names
	must(t, f.e.Cancel(&Call{Session: f.ts}, n))
	f.clock.Advance(f.e.Settings().NodeRetention + time.Second)
	f.e.Reap(&Call{})
	// Class "capped" went with the only node that carried it. The tenant
	// node keeps "one", as a resource for its usage and as a class for the
	// leases its subtree held.
	f.consume(f.ts, f.tight, "two", 1)
}

func TestBoundSessions(t *testing.T) {
	f := newBoundFixture(t, roomy(BoundSessions, 2))
	f.session(f.tight, time.Second) // the fixture opened one already
	open := func(_, scope ID) error {
		f.n++
		_, err := f.e.OpenSession(&Call{}, scope, 0, token(f.n))
		return err
	}
	f.try(BoundSessions, 2, 2, open)
	f.clock.Advance(2 * time.Second) // the second lapses
	must(t, open(0, f.tight))
	f.try(BoundSessions, 2, 2, open)
	must(t, f.e.CloseSession(&Call{Session: f.ts}))
	must(t, open(0, f.tight))
}

func TestBoundQueued(t *testing.T) {
	f := newBoundFixture(t, roomy(BoundQueued, 1))
	for _, tn := range []ID{f.tight, f.roomy} {
		must(t, f.e.SetLimit(&Call{}, tn, "db", ptr(1)))
	}
	f.grant(f.ts, f.tight, "db")
	f.grant(f.rs, f.roomy, "db")
	w := f.queue(f.ts, f.tight, "db")
	f.try(BoundQueued, 1, 1, func(sess, scope ID) error {
		_, _, err := f.e.Acquire(&Call{Session: sess}, scope, "db", 0)
		return err
	})
	f.e.Abandon(&Call{Session: f.ts}, w)
	f.queue(f.ts, f.tight, "db")
}

func TestBoundWatches(t *testing.T) {
	f := newBoundFixture(t, roomy(BoundWatches, 1))
	slot, err := f.e.HoldWatch(&Call{Session: f.ts})
	must(t, err)
	var kept []WatchSlot
	f.try(BoundWatches, 1, 1, func(sess, _ ID) error {
		s, err := f.e.HoldWatch(&Call{Session: sess})
		kept = append(kept, s)
		return err
	})
	f.e.FreeWatch(slot)
	_, err = f.e.HoldWatch(&Call{Session: f.ts})
	must(t, err)
	for _, s := range kept {
		f.e.FreeWatch(s)
	}
	if got := f.e.Bounds()[1].Held[BoundWatches]; got != 0 {
		t.Fatalf("the roomy tenant holds %d watches after freeing them all", got)
	}
}

// TestBoundsAfterRestart rebuilds the engine from a snapshot and from the
// events alone: each counts what the tenant holds as the live one did, still
// refuses past the bound, and admits once the bound is raised.
func TestBoundsAfterRestart(t *testing.T) {
	f := newBoundFixture(t, Bounds{2, 2, 2, 1, 1})
	n := f.create(f.ts, f.tight, Spec{Name: "n", Quotas: map[string]int64{"a": 1}})
	f.create(f.ts, n, Spec{Name: "m", Limits: map[string]int64{"b": 1}})
	f.session(f.tight, 0)
	live := f.e.Bounds()
	rebuilt, err := Restore(Options{Clock: f.clock}, f.e.Dump())
	must(t, err)
	replayed := New(Options{Clock: f.clock})
	for _, ev := range f.rec.events {
		must(t, replayed.Replay(ev))
	}
	for way, e := range map[string]*Engine{"snapshot": rebuilt, "events": replayed} {
		if got := e.Bounds(); got[0].Held != live[0].Held || got[1].Held != live[1].Held {
			t.Fatalf("rebuilt from %s counts %+v, live %+v", way, got, live)
		}
		must(t, e.SetBounds(f.cfg))
	}
	for _, e := range []*Engine{f.e, rebuilt, replayed} {
		_, err := e.Create(&Call{Session: f.ts}, f.tight, Spec{Name: "x"})
		var be *BoundError
		if !errors.As(err, &be) || be.Bound != BoundNodes {
			t.Fatalf("past the node bound after a restart: %v", err)
		}
	}
	raised := f.cfg
	raised.PerTenant = map[ID]Bounds{f.tight: {3, 2, 2, 1, 1}}
	must(t, rebuilt.SetBounds(raised))
	if _, err := rebuilt.Create(&Call{Session: f.ts}, f.tight, Spec{Name: "x"}); err != nil {
		t.Fatalf("a raised bound still refuses: %v", err)
	}
}

func TestBoundsCheck(t *testing.T) {
	e := New(Options{Clock: newFakeClock()})
	for _, b := range []Bounds{{}, {1, 1, 1, 1, -1}, {MaxBound + 1, 1, 1, 1, 1}} {
		err := e.SetBounds(BoundsConfig{Default: b})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("bounds %v: got %v, want an invalid argument", b, err)
		}
	}
	err := e.SetBounds(BoundsConfig{Default: DefaultBounds(), PerTenant: map[ID]Bounds{RootID: {}}})
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("a tenant's zero bounds: got %v, want an invalid argument", err)
	}
}
