package engine

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// restoredSame fails the test unless the engine's state, dumped and
// restored, loads and is the same state.
func restoredSame(t *testing.T, f *fixture) {
	t.Helper()
	st := f.e.Dump()
	e, err := Restore(Options{Clock: f.clock}, st)
	if err != nil {
		t.Fatalf("the state does not load: %v", err)
	}
	if got := e.Dump(); !reflect.DeepEqual(got, st) {
		t.Fatalf("the restored state differs:\n%s", diffSnapshots(got, st))
	}
}

// TestCallerNumbersNeverWrap checks that a number a caller sends which
// would take a counter or an instant past the int64 range is refused,
// naming the field, and changes nothing; the state still loads.
func TestCallerNumbersNeverWrap(t *testing.T) {
	const most = math.MaxInt64
	cases := []struct {
		name  string
		setup func(w *invalidWorld)
		op    func(w *invalidWorld) error
		field string
		// creates says the call creates nodes before it is refused, as a
		// keyed consume creates its key's.
		creates bool
	}{
		{"consume the most twice on an uncapped resource", func(w *invalidWorld) {
			w.f.consume(w.s, w.task, "http", most)
		}, func(w *invalidWorld) error {
			return w.f.e.Consume(&Call{Session: w.s}, w.task, "http", most)
		}, "amount", false},
		{"consume one more on the tenant", func(w *invalidWorld) {
			w.f.consume(w.s, w.task, "http", most)
		}, func(w *invalidWorld) error {
			_, err := w.f.e.ConsumeWith(&Call{Session: w.s}, w.ten, "http", 1, ConsumeOptions{MaxWait: time.Second})
			return err
		}, "amount", false},
		{"ensure with a charge past the most", func(w *invalidWorld) {
			w.f.consume(w.s, w.task, "http", 2)
		}, func(w *invalidWorld) error {
			_, _, err := w.f.e.Ensure(&Call{Session: w.s}, w.task, Spec{Name: "n"}, &Charge{Resource: "http", Amount: most - 1})
			return err
		}, "charge.amount", false},
		{"keyed consume past the most", func(w *invalidWorld) {
			w.f.consume(w.s, w.task, "http", most)
		}, func(w *invalidWorld) error {
			k := KeyedLimit{Parent: w.task, Group: "g", Key: "k", Resource: "http", Rate: Rate{Limit: 10, Period: time.Second}}
			_, err := w.f.e.ConsumeKeyed(&Call{Session: w.s}, k, 1, ConsumeOptions{})
			return err
		}, "amount", true},
		{"max_hold of the longest duration (what 315576000000s becomes)", nil, func(w *invalidWorld) error {
			_, _, err := w.f.e.Acquire(&Call{Session: w.s}, w.task, "db", most)
			return err
		}, "max_hold", false},
		{"max_hold a nanosecond past 366 days", nil, func(w *invalidWorld) error {
			_, _, err := w.f.e.Acquire(&Call{Session: w.s}, w.task, "db", MaxSpan+1)
			return err
		}, "max_hold", false},
		{"session ttl of the most", nil, func(w *invalidWorld) error {
			_, err := w.f.e.OpenSession(w.f.sys(), w.ten, most, token(77))
			return err
		}, "ttl", false},
		{"node retention of the most", nil, func(w *invalidWorld) error {
			return w.f.e.Configure(w.f.sys(), Settings{NodeRetention: most})
		}, "node_retention", false},
		{"tombstone ttl of the most", nil, func(w *invalidWorld) error {
			return w.f.e.Configure(w.f.sys(), Settings{TombstoneTTL: most})
		}, "tombstone_ttl", false},
		{"key idle of the most", nil, func(w *invalidWorld) error {
			return w.f.e.Configure(w.f.sys(), Settings{KeyIdle: most})
		}, "key_idle", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newInvalidWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			before := w.f.e.Dump()
			wantInvalid(t, tc.op(w), tc.field)
			if !tc.creates {
				sameState(t, w.f.e, before)
			}
			restoredSame(t, w.f)
		})
	}
}

// TestLongestSpansHold checks that the longest spans allowed are accepted
// and the state they leave loads.
func TestLongestSpansHold(t *testing.T) {
	w := newInvalidWorld(t)
	w.f.consume(w.s, w.task, "http", math.MaxInt64)
	if _, _, err := w.f.e.Acquire(&Call{Session: w.s}, w.task, "db", MaxSpan); err != nil {
		t.Fatalf("acquire with max_hold of %s: %v", MaxSpan, err)
	}
	if _, err := w.f.e.OpenSession(w.f.sys(), w.ten, MaxSpan, token(78)); err != nil {
		t.Fatalf("open a session with a ttl of %s: %v", MaxSpan, err)
	}
	if err := w.f.e.Configure(w.f.sys(), Settings{TombstoneTTL: MaxSpan, NodeRetention: MaxSpan, KeyIdle: MaxSpan}); err != nil {
		t.Fatalf("configure every span at %s: %v", MaxSpan, err)
	}
	restoredSame(t, w.f)
}

// TestACapRefusesBeforeTheCounterLimit: an amount past what the counters
// hold that a cap refuses anyway is denied by the cap, as any amount over
// it is, not refused as invalid.
func TestACapRefusesBeforeTheCounterLimit(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Quotas: map[string]int64{"http": 10}})
	s := f.session(ten, 0)
	f.consume(s, ten, "http", 1)
	if err := f.e.Consume(&Call{Session: s}, ten, "http", math.MaxInt64); !errors.Is(err, ErrDenied) {
		t.Fatalf("consume the most under a cap of 10: %v, want denied by the cap", err)
	}
	k := KeyedLimit{Parent: ten, Group: "g", Key: "k", Resource: "http", Rate: Rate{Limit: 10, Period: time.Second}}
	if _, err := f.e.ConsumeKeyed(&Call{Session: s}, k, math.MaxInt64, ConsumeOptions{}); !errors.Is(err, ErrDenied) {
		t.Fatalf("a keyed consume of the most at 10 a second: %v, want denied by the rate cap", err)
	}
}
