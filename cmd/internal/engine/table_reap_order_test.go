package engine

import (
	"testing"
	"time"
)

// TestOneReapTakesInstantsInOrder: a session that lapses at +1s frees the
// slot a waiter wants; the waiter's own session lapses at +1.5s; a single
// Reap at +2s takes both. The waiter is granted the freed slot first (its
// session was live at +1s), then its session's end takes the lease back,
// in that order on the record.
func TestOneReapTakesInstantsInOrder(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Limits: map[string]int64{"db": 1}})
	holder := f.session(ten, time.Second)
	f.grant(holder, ten, "db")
	f.clock.Advance(500 * time.Millisecond)
	waiter := f.session(ten, time.Second)
	w := f.queue(waiter, ten, "db")
	f.clock.Advance(1500 * time.Millisecond)
	from := len(f.rec.events)
	f.e.Reap(f.sys())
	lease := mustGrant(t, w)
	var kinds []Kind
	for _, ev := range f.rec.events[from:] {
		kinds = append(kinds, ev.Kind)
	}
	want := []Kind{KindSessionExpired, KindLeaseGranted, KindSessionExpired}
	if len(kinds) != len(want) {
		t.Fatalf("events of the reap: %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events of the reap: %v, want %v", kinds, want)
		}
	}
	if got := f.rec.events[from+2].Target; got != waiter {
		t.Fatalf("the second expiry ends session %d, want the waiter's %d", got, waiter)
	}
	if _, err := f.e.Validate(f.sys(), lease.ID); err == nil {
		t.Fatal("the waiter's lease outlived its session")
	}
	if h := f.held(ten, "db"); h != 0 {
		t.Fatalf("%d leases held after both sessions ended", h)
	}
}
