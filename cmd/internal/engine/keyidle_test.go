package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// keyIdleWorld is a keyed world whose idle keys are forgotten after idle (0:
// never).
func keyIdleWorld(t *testing.T, idle time.Duration) *keyedWorld {
	w := newKeyedWorld(t, nil)
	set := DefaultSettings()
	set.KeyIdle = idle
	must(t, w.e.Configure(w.sys(), set))
	return w
}

// keyedNodes lists the keyed nodes in the tree.
func (w *keyedWorld) keyedNodes() map[Keyed]int {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	out := make(map[Keyed]int)
	for _, n := range w.e.nodes {
		if n.keyed != NotKeyed {
			out[n.keyed]++
		}
	}
	return out
}

// keyAnswer is everything a keyed consume answers except the node ids,
// which a forgotten key's new node does not share.
type keyAnswer struct {
	Status     Status
	RetryAfter time.Duration
	Rate       bool
	Limit      int64
	Remaining  int64
	Reset      int64
	NeverFits  bool
	Err        string
}

func answerOf(res ConsumeResult, err error) keyAnswer {
	var d *DeniedError
	switch {
	case errors.As(err, &d):
		return keyAnswer{Status: 255, RetryAfter: d.RetryAfter, Rate: d.Rate != nil, Limit: d.Limit, Remaining: d.Remaining, Reset: d.Reset, NeverFits: d.NeverFits}
	case err != nil:
		return keyAnswer{Err: err.Error()}
	}
	return keyAnswer{Status: res.Status, RetryAfter: res.RetryAfter, Rate: res.Rate, Limit: res.Limit, Remaining: res.Remaining, Reset: res.Reset}
}

type keyStep struct {
	wait time.Duration // before the request
	n    int64
	o    ConsumeOptions
}

// TestForgottenKeyAnswersAsKept runs the same requests against an engine
// that forgets idle keys and one that keeps them: once the first has
// forgotten the key (and its group), every later answer, at the same
// instants, is the same. The forgetting engine's record replays to its state.
func TestForgottenKeyAnswersAsKept(t *testing.T) {
	booked := ConsumeOptions{MaxWait: 2 * time.Minute}
	cases := []struct {
		name string
		rate Rate
	}{
		{"token bucket", Rate{Limit: 10, Period: time.Minute}},
		{"leaky bucket", Rate{Limit: 10, Period: time.Minute, Burst: 4, Algorithm: LeakyBucket}},
		{"calendar minute", Rate{Limit: 10, Calendar: Minute}},
		{"leaky, one per 7s", Rate{Limit: 1, Period: 7 * time.Second, Algorithm: LeakyBucket}},
	}
	before := []keyStep{{0, 3, ConsumeOptions{}}, {20 * time.Second, 4, booked}, {time.Second, 5, booked}, {0, 2, ConsumeOptions{Drain: true}}}
	after := []keyStep{
		{0, 0, ConsumeOptions{}}, {0, 4, ConsumeOptions{}}, {1500 * time.Millisecond, 7, ConsumeOptions{}},
		{0, 0, ConsumeOptions{}}, {7 * time.Second, 3, booked}, {0, 2, booked}, {time.Second, 9, ConsumeOptions{Drain: true}},
		{59 * time.Second, 1, ConsumeOptions{}}, {0, 11, booked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forgets, keeps := keyIdleWorld(t, time.Minute), keyIdleWorld(t, 0)
			both := func(i int, s keyStep) {
				t.Helper()
				var got [2]keyAnswer
				for j, w := range []*keyedWorld{forgets, keeps} {
					w.clock.Advance(s.wait)
					res, err, _ := w.hit(w.limit("account:1", tc.rate), s.n, s.o)
					got[j] = answerOf(res, err)
				}
				if got[0] != got[1] {
					t.Fatalf("step %d (%d hits): forgetting engine %+v, keeping engine %+v", i, s.n, got[0], got[1])
				}
			}
			for i, s := range before {
				both(i, s)
			}
			for _, w := range []*keyedWorld{forgets, keeps} {
				w.clock.Advance(5 * time.Minute)
				w.e.Reap(w.sys())
			}
			last := forgets.rec.events[len(forgets.rec.events)-1]
			if k := forgets.keyedNodes(); len(k) != 0 || last.Kind != KindKeysForgotten || len(last.IDs) != 2 {
				t.Fatalf("forgetting engine kept %v, last event %+v; want the key and its group forgotten in one event", k, last)
			}
			if k := keeps.keyedNodes(); k[KeyNode] != 1 || k[KeyGroup] != 1 {
				t.Fatalf("keeping engine has %v; want its key and group", k)
			}
			for i, s := range after {
				both(len(before)+i, s)
			}
			replayed := New(Options{Clock: forgets.clock})
			for _, ev := range forgets.rec.events {
				must(t, replayed.Replay(ev))
			}
			if got, want := replayed.Dump(), forgets.e.Dump(); !equalSnapshots(got, want) {
				t.Fatalf("replay differs from the live engine:\n%s", diffSnapshots(got, want))
			}
		})
	}
}

// TestKeyKeptUntilFresh checks that a key is forgotten exactly when it has
// held what a new key would for the idle time: not while it is in debt, has
// a slot booked or a token window open, nor while an admin's cap is on it;
// and that its group stays while it carries a cap of its own.
func TestKeyKeptUntilFresh(t *testing.T) {
	perMin := Rate{Limit: 1, Period: time.Minute, Algorithm: LeakyBucket}
	cases := []struct {
		name  string
		rate  Rate
		setup func(w *keyedWorld, k KeyedLimit)
		kept  []time.Duration // instants after the first request at which the key is still there
		gone  time.Duration   // and the instant at which it is forgotten; 0: never
		group bool            // the group stays when the key goes
	}{
		{"leaky bucket in debt with a booked slot", perMin, func(w *keyedWorld, k KeyedLimit) {
			if res, err, _ := w.hit(k, 1, ConsumeOptions{MaxWait: 5 * time.Minute}); err != nil || res.Status != Scheduled {
				t.Fatalf("want a booked slot, got %+v %v", res, err)
			}
		}, []time.Duration{2 * time.Second, 61 * time.Second, 121*time.Second - 1}, 121 * time.Second, false},
		{"token bucket with its window open", Rate{Limit: 5, Period: time.Hour}, nil,
			[]time.Duration{2 * time.Second, 30 * time.Minute, time.Hour + time.Second - 1}, time.Hour + time.Second, false},
		{"a quota on the key", Rate{Limit: 5, Period: time.Second}, func(w *keyedWorld, k KeyedLimit) {
			must(t, w.e.SetQuota(w.sys(), w.keyID(k), "other", ptr(100)))
		}, []time.Duration{2 * time.Second, 24 * time.Hour}, 0, false},
		{"a limit on the key", Rate{Limit: 5, Period: time.Second}, func(w *keyedWorld, k KeyedLimit) {
			must(t, w.e.SetLimit(w.sys(), w.keyID(k), "db", ptr(1)))
		}, []time.Duration{2 * time.Second, 24 * time.Hour}, 0, false},
		{"a rate on the group", Rate{Limit: 5, Period: time.Second}, func(w *keyedWorld, k KeyedLimit) {
			must(t, w.e.SetRate(w.sys(), w.e.nodes[w.keyID(k)].parent.id, "api", &Rate{Limit: 100, Period: time.Second}))
		}, []time.Duration{time.Second}, 2 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := keyIdleWorld(t, time.Second)
			k := w.limit("account:1", tc.rate)
			start := w.clock.Now()
			if _, err, _ := w.hit(k, 1, ConsumeOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(w, k)
			}
			at := func(d time.Duration) map[Keyed]int {
				w.clock.Advance(start.Add(d).Sub(w.clock.Now()))
				w.e.Reap(w.sys())
				return w.keyedNodes()
			}
			for _, d := range tc.kept {
				if got := at(d); got[KeyNode] != 1 {
					t.Fatalf("at +%s: %v; want the key kept", d, got)
				}
			}
			if tc.gone == 0 {
				return
			}
			want := map[Keyed]int{}
			if tc.group {
				want[KeyGroup] = 1
			}
			if got := at(tc.gone); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("at +%s: %v; want %v", tc.gone, got, want)
			}
		})
	}
}

func (w *keyedWorld) keyID(k KeyedLimit) ID {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	return w.e.nodes[k.Parent].byName[k.Group].byName[k.Key].id
}

// TestForgettingABusyKeyIsCorrupt replays a record that forgets a key before
// it is idle: the record is refused.
func TestForgettingABusyKeyIsCorrupt(t *testing.T) {
	w := keyIdleWorld(t, time.Minute)
	k := w.limit("account:1", perMinute)
	if _, err, _ := w.hit(k, 1, ConsumeOptions{}); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(90 * time.Second) // the window ended 30s ago: not idle for a minute yet
	ev := &Event{Seq: w.e.Seq() + 1, Time: w.clock.Now().UnixNano(), Kind: KindKeysForgotten, IDs: []ID{w.keyID(k)}}
	if err := w.e.Replay(ev); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
	w.clock.Advance(30 * time.Second)
	ev.Time = w.clock.Now().UnixNano()
	must(t, w.e.Replay(ev))
}

// TestKeyedValidation checks the settings and spec fields of keyed nodes.
func TestKeyedValidation(t *testing.T) {
	f := newFixture(t)
	set := DefaultSettings()
	set.KeyIdle = -time.Second
	if err := f.e.Configure(f.sys(), set); !isInvalid(err, "key_idle") {
		t.Errorf("negative key_idle: got %v", err)
	}
	for _, sp := range []Spec{{Name: "x", Keyed: KeyGroup}, {Name: "x", Keyed: KeyNode, Rates: map[string]Rate{"api": perMinute}}, {Name: "x", Keyed: 3}} {
		if _, err := f.e.Create(f.sys(), RootID, sp); !isInvalid(err, "keyed") {
			t.Errorf("create with keyed %d: got %v, want an error on keyed", sp.Keyed, err)
		}
	}
}

func isInvalid(err error, field string) bool {
	var ie *InvalidError
	return errors.As(err, &ie) && ie.Field == field
}
