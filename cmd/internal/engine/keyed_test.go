package engine

import (
	"errors"
	"testing"
	"time"
)

// keyedWorld is a tenant whose keyed rate limits are on resource "api".
type keyedWorld struct {
	*fixture
	tenant ID
}

func newKeyedWorld(t *testing.T, tenantRates map[string]Rate) *keyedWorld {
	f := newFixture(t)
	return &keyedWorld{fixture: f, tenant: f.tenant(Spec{Name: "acme", Rates: tenantRates})}
}

// limit is key's rate limit with rate r.
func (w *keyedWorld) limit(key string, r Rate) KeyedLimit {
	return KeyedLimit{Parent: w.tenant, Group: "requests_per_sec", Key: key, Resource: "api", Rate: r}
}

// hit consumes n on key and counts the events it emitted.
func (w *keyedWorld) hit(k KeyedLimit, n int64, o ConsumeOptions) (ConsumeResult, error, []Kind) {
	before := len(w.rec.events)
	res, err := w.e.ConsumeKeyed(w.sys(), k, n, o)
	var kinds []Kind
	for _, ev := range w.rec.events[before:] {
		kinds = append(kinds, ev.Kind)
	}
	return res, err, kinds
}

func sameKinds(a, b []Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var perMinute = Rate{Limit: 10, Period: time.Minute}

// TestKeyedEvents checks what each request costs in events: a new key its
// nodes and the charge, a known key the charge alone, a peek nothing.
func TestKeyedEvents(t *testing.T) {
	w := newKeyedWorld(t, nil)
	k := w.limit("account:1", perMinute)
	steps := []struct {
		name   string
		k      KeyedLimit
		n      int64
		kinds  []Kind
		remain int64
	}{
		{"new name and key", k, 1, []Kind{KindNodeCreated, KindNodeCreated, KindConsumed}, 9},
		{"known key", k, 2, []Kind{KindConsumed}, 7},
		{"peek", k, 0, nil, 7},
		{"new key under a known name", w.limit("account:2", perMinute), 1, []Kind{KindNodeCreated, KindConsumed}, 9},
		{"the rate changes", w.limit("account:1", Rate{Limit: 20, Period: time.Minute}), 1, []Kind{KindRateSet, KindConsumed}, 16},
		{"reset", func() KeyedLimit {
			r := w.limit("account:1", Rate{Limit: 20, Period: time.Minute})
			r.Reset = true
			return r
		}(), 0, []Kind{KindRateReset}, 20},
	}
	for _, s := range steps {
		res, err, kinds := w.hit(s.k, s.n, ConsumeOptions{})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !sameKinds(kinds, s.kinds) || res.Remaining != s.remain || !res.Rate {
			t.Errorf("%s: events %v, remaining %d (rate %v); want %v, %d", s.name, kinds, res.Remaining, res.Rate, s.kinds, s.remain)
		}
	}
	group := w.e.nodes[w.tenant].byName["requests_per_sec"]
	if group == nil || group.order.len() != 2 || group.res.get("api").rate != nil {
		t.Fatalf("want one group node with two keys and no cap of its own, got %+v", group)
	}
}

// TestKeyedChain checks that a key is charged with every cap above it: a
// tenant's rate on the resource bounds all keys together.
func TestKeyedChain(t *testing.T) {
	w := newKeyedWorld(t, map[string]Rate{"api": {Limit: 3, Period: time.Minute}})
	for i, key := range []string{"a", "b", "c"} {
		res, err, _ := w.hit(w.limit(key, perMinute), 1, ConsumeOptions{})
		if err != nil || res.Remaining != int64(2-i) || res.Node != w.tenant {
			t.Fatalf("hit %d: %+v %v; want the tenant's cap tightest with %d left", i, res, err, 2-i)
		}
	}
	_, err, kinds := w.hit(w.limit("d", perMinute), 1, ConsumeOptions{})
	d := denial(t, err)
	if d.Node != w.tenant || d.Rate == nil || d.RetryAfter != time.Minute || !sameKinds(kinds, []Kind{KindNodeCreated}) {
		t.Errorf("got %+v after events %v; want the tenant's rate refusing until its window ends, the new key kept", d, kinds)
	}
}

// TestKeyedSchedule is the documented scheduling example through keyed
// limits: 10 per minute, burst 10, max_wait 120000 ms, 31 requests at once.
func TestKeyedSchedule(t *testing.T) {
	w := newKeyedWorld(t, nil)
	k := w.limit("vendor", Rate{Limit: 10, Period: time.Minute, Burst: 10, Algorithm: LeakyBucket})
	o := ConsumeOptions{MaxWait: 120 * time.Second}
	for i := int64(1); i <= 31; i++ {
		res, err, _ := w.hit(k, 1, o)
		switch {
		case i <= 10:
			if err != nil || res.Status != Admitted {
				t.Fatalf("request %d: %+v %v; want admitted", i, res, err)
			}
		case i <= 30:
			if want := time.Duration(i-10) * 6 * time.Second; err != nil || res.Status != Scheduled || res.RetryAfter != want {
				t.Fatalf("request %d: %+v %v; want scheduled in %s", i, res, err, want)
			}
		default:
			if d := denial(t, err); d.RetryAfter != 126*time.Second || d.NeverFits {
				t.Fatalf("request 31: %+v; want refused with 126s", d)
			}
		}
	}
	if _, err, _ := w.hit(k, 11, o); !errors.Is(err, ErrNeverFits) {
		t.Errorf("11 hits on a burst of 10: %v; want never fits", err)
	}
}

// TestKeyedDrain checks that a drained refusal leaves nothing remaining.
func TestKeyedDrain(t *testing.T) {
	w := newKeyedWorld(t, nil)
	k := w.limit("a", perMinute)
	if _, err, _ := w.hit(k, 4, ConsumeOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err, kinds := w.hit(k, 7, ConsumeOptions{Drain: true})
	if denial(t, err); !sameKinds(kinds, []Kind{KindRateDrained}) {
		t.Fatalf("events %v, want one drain", kinds)
	}
	if res, _, _ := w.hit(k, 0, ConsumeOptions{}); res.Remaining != 0 {
		t.Errorf("remaining %d after the drain, want 0", res.Remaining)
	}
	w.clock.Advance(time.Minute)
	if res, _, _ := w.hit(k, 0, ConsumeOptions{}); res.Remaining != 10 {
		t.Errorf("remaining %d once the window ended, want 10", res.Remaining)
	}
}

// TestKeyedRefusals checks what a keyed consume refuses, changing nothing.
func TestKeyedRefusals(t *testing.T) {
	w := newKeyedWorld(t, nil)
	k := w.limit("a", perMinute)
	if _, err, _ := w.hit(k, 1, ConsumeOptions{}); err != nil {
		t.Fatal(err)
	}
	key := w.e.nodes[w.tenant].byName["requests_per_sec"].byName["a"].id
	if err := w.e.Cancel(w.sys(), key); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    *Call
		k    KeyedLimit
		n    int64
		o    ConsumeOptions
		want error
	}{
		{"ended key", w.sys(), k, 1, ConsumeOptions{}, ErrNodeEnded},
		{"request id", &Call{Request: "r1"}, w.limit("b", perMinute), 1, ConsumeOptions{}, ErrInvalid},
		{"empty key", w.sys(), w.limit("", perMinute), 1, ConsumeOptions{}, ErrInvalid},
		{"bad rate", w.sys(), w.limit("b", Rate{Limit: 0, Period: time.Minute}), 1, ConsumeOptions{}, ErrInvalid},
		{"peek with max_wait", w.sys(), w.limit("b", perMinute), 0, ConsumeOptions{MaxWait: time.Second}, ErrInvalid},
		{"unknown parent", w.sys(), KeyedLimit{Parent: 999, Group: "g", Key: "k", Resource: "api", Rate: perMinute}, 1, ConsumeOptions{}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.e.Dump()
			if _, err := w.e.ConsumeKeyed(tt.c, tt.k, tt.n, tt.o); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			sameState(t, w.e, before)
		})
	}
}

// TestKeyedReplay rebuilds the engine from the keyed consumes' events, after
// time has passed, and compares it with the live one.
func TestKeyedReplay(t *testing.T) {
	w := newKeyedWorld(t, map[string]Rate{"api": {Limit: 100, Period: time.Second}})
	base := w.e.Dump()
	leakyRate := Rate{Limit: 10, Period: time.Minute, Burst: 5, Algorithm: LeakyBucket}
	for i := range 40 {
		k := w.limit([]string{"a", "b", "c"}[i%3], leakyRate)
		if i%7 == 0 {
			k.Rate.Burst = 8
		}
		_, _, _ = w.hit(k, 1, ConsumeOptions{MaxWait: 30 * time.Second})
		w.clock.Advance(1500 * time.Millisecond)
	}
	e, err := Restore(Options{Clock: w.clock}, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range w.rec.events {
		if ev.Seq <= base.Seq {
			continue
		}
		data, err := ev.Encode()
		must(t, err)
		dec, err := DecodeEvent(data)
		must(t, err)
		if err := e.Replay(dec); err != nil {
			t.Fatalf("replay event %d (%s): %v", ev.Seq, ev.Kind, err)
		}
	}
	w.clock.Advance(time.Minute)
	now := w.clock.Now().UnixNano()
	if got, live := e.Dump(), w.e.Dump(); !equalSnapshots(visible(got, now), visible(live, now)) {
		t.Fatalf("replay differs from the live engine:\n%s", diffSnapshots(visible(got, now), visible(live, now)))
	}
	k := w.limit("a", leakyRate)
	live, liveErr := w.e.ConsumeKeyed(w.sys(), k, 0, ConsumeOptions{})
	got, gotErr := e.ConsumeKeyed(&Call{}, k, 0, ConsumeOptions{})
	if live != got || liveErr != nil || gotErr != nil {
		t.Errorf("peek after replay %+v %v; live %+v %v", got, gotErr, live, liveErr)
	}
}
