package engine

import (
	"testing"
	"time"
)

// TestRepeatedConsumeAnswersFirst: a consume repeated with its request id
// answers what the first call answered (the tightest cap and what it had
// left after the charge), not the balance as it is now, and so does a
// retry after a replay of the events or a restore of a snapshot.
func TestRepeatedConsumeAnswersFirst(t *testing.T) {
	w := newIdemWorld(t)
	f := w.f
	c := func() *Call { return &Call{Session: w.s, Request: "r1"} }
	first, err := f.e.ConsumeWith(c(), w.task, "http", 3, ConsumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Capped || first.Remaining != 97 {
		t.Fatalf("first answer: %+v, want 97 of 100 left", first)
	}
	f.consume(w.s, w.task, "http", 40)
	check := func(e *Engine, how string) {
		t.Helper()
		again, err := e.ConsumeWith(c(), w.task, "http", 3, ConsumeOptions{})
		if err != nil || again != first {
			t.Fatalf("%s: repeated answer %+v, %v; want the first %+v", how, again, err, first)
		}
		inf, _, _, err := e.Describe(&Call{}, w.ten, nil)
		if err != nil {
			t.Fatal(err)
		}
		if used := inf.Quotas["http"].Used; used != 43 {
			t.Fatalf("%s: used %d, want 43 (the repeat charged again)", how, used)
		}
	}
	f.everyWay(t, check)
}

// TestRepeatedScheduledConsumeKeepsItsSlot: a scheduled consume repeated
// later answers the same booked slot, now nearer.
func TestRepeatedScheduledConsumeKeepsItsSlot(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Rates: map[string]Rate{"rps": {Limit: 1, Period: time.Second, Algorithm: LeakyBucket}}})
	s := f.session(ten, 0)
	f.consume(s, ten, "rps", 1)
	o := ConsumeOptions{MaxWait: time.Minute}
	first, err := f.e.ConsumeWith(&Call{Session: s, Request: "r1"}, ten, "rps", 1, o)
	if err != nil || first.Status != Scheduled {
		t.Fatalf("first: %+v, %v; want scheduled", first, err)
	}
	f.clock.Advance(first.RetryAfter / 2)
	again, err := f.e.ConsumeWith(&Call{Session: s, Request: "r1"}, ten, "rps", 1, o)
	want := first
	want.RetryAfter -= first.RetryAfter / 2
	if err != nil || again != want {
		t.Fatalf("repeated half way: %+v, %v; want %+v", again, err, want)
	}
}

// TestRepeatedAcquireAnswersHowItsLeaseEnded: an acquire repeated with its
// request id answers its lease while it lives and, once it was released,
// that it was released: never an ended lease as if it held a slot.
func TestRepeatedAcquireAnswersHowItsLeaseEnded(t *testing.T) {
	w := newIdemWorld(t)
	c := func() *Call { return &Call{Session: w.s, Request: "r1"} }
	first, _, err := w.f.e.Acquire(c(), w.task, "db", 0)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, err := w.f.e.Acquire(c(), w.task, "db", 0); err != nil || again != first {
		t.Fatalf("repeated while held: %+v, %v; want %+v", again, err, first)
	}
	w.f.release(w.s, first.ID)
	_, _, err = w.f.e.Acquire(c(), w.task, "db", 0)
	leaseErr(t, err, first.ID, OutcomeReleased)
	if h := w.f.held(w.ten, "db"); h != 2 {
		t.Fatalf("held %d, want the world's 2: the repeat granted again", h)
	}
}
