package engine

import (
	"errors"
	"testing"
	"time"
)

// TestCallsTakeDueDecisionsFirst checks that a call takes every decision
// of time already due before anything else, though Reap has not run: a
// slot whose hold ran out, or whose holder's session lapsed, is free for
// describe and for the next acquire.
func TestCallsTakeDueDecisionsFirst(t *testing.T) {
	cases := []struct {
		name string
		hold time.Duration // the first lease's max_hold
		ttl  time.Duration // its session's ttl
	}{
		{"a hold ran out", 200 * time.Millisecond, 0},
		{"the holder's session lapsed", 0, 200 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ten := f.tenant(Spec{Name: "a", Limits: map[string]int64{"db": 1}})
			holder, other := f.session(ten, tc.ttl), f.session(ten, 0)
			if _, w, err := f.e.Acquire(&Call{Session: holder}, 0, "db", tc.hold); err != nil || w != nil {
				t.Fatalf("first acquire: %v, queued %v", err, w != nil)
			}
			f.clock.Advance(500 * time.Millisecond)
			if held := f.describe(ten).Limits["db"].Held; held != 0 {
				t.Fatalf("describe 0.5s on shows %d held, want 0", held)
			}
			l, w, err := f.e.Acquire(&Call{Session: other}, 0, "db", 0)
			if err != nil || w != nil || l.ID == 0 {
				t.Fatalf("second acquire: %+v, %v, queued %v; want a lease at once", l, err, w != nil)
			}
		})
	}
}

// TestDescribeWaitsForTheDecisionsItTook checks that a describe that took
// a decision of time reports the sequence number of its event, so its
// answer is given only once the decision is on record.
func TestDescribeWaitsForTheDecisionsItTook(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Limits: map[string]int64{"db": 1}})
	s := f.session(ten, 0)
	if _, _, err := f.e.Acquire(&Call{Session: s}, 0, "db", time.Second); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Second)
	before := f.e.Seq()
	c := &Call{}
	if _, _, _, err := f.e.Describe(c, ten, nil); err != nil {
		t.Fatal(err)
	}
	if c.Seq != before+1 || f.rec.events[len(f.rec.events)-1].Kind != KindLeaseExpired {
		t.Fatalf("describe's sequence is %d after %d, last event %s; want the hold's expiry, recorded", c.Seq, before, f.rec.events[len(f.rec.events)-1].Kind)
	}
}

// TestALateReapGrantsAsOnTime: a slot's hold runs out at 1s and its waiter's
// session lapses at 1.5s, and nothing is called until 2s. Taken at their
// instants, the waiter is granted the slot at 1s and its lease ends with
// its session; a late reap gives the same result, not a waiter failed for
// its session.
func TestALateReapGrantsAsOnTime(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Limits: map[string]int64{"db": 1}})
	holder, waiter := f.session(ten, 0), f.session(ten, 1500*time.Millisecond)
	if _, _, err := f.e.Acquire(&Call{Session: holder}, 0, "db", time.Second); err != nil {
		t.Fatal(err)
	}
	_, w, err := f.e.Acquire(&Call{Session: waiter}, 0, "db", 0)
	if err != nil || w == nil {
		t.Fatalf("the waiter's acquire: %v, queued %v; want it queued", err, w != nil)
	}
	f.clock.Advance(2 * time.Second)
	f.e.Reap(f.sys())
	l := mustGrant(t, w)
	if _, err := f.e.Validate(f.sys(), l.ID); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("the waiter's lease after its session lapsed: %v, want expired", err)
	}
	if held := f.describe(ten).Limits["db"].Held; held != 0 {
		t.Fatalf("%d held once both ran out, want 0", held)
	}
}
