package governor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// A grant that races the cancellation of its Acquire is given back: a
// pool of 1 is held, 50 Acquires queue, the lease is released and the
// waiters are cancelled about 1 ms later, 20 times; after each round no
// lease is left held while the client lives on. The delay between the
// release and the cancellation goes from 0 to 1 ms over the rounds.
func TestCancelledAcquiresLeaveNoLeaseHeld(t *testing.T) {
	g := newGovernord(t)
	c := dial(t, g.addr, WithSessionTTL(3*time.Second))
	ctx, tk := task(t, c, Spec{Name: "pool", Limits: map[string]int64{"db": 1}})
	for round := range 20 {
		held, err := Acquire(ctx, "db")
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var granted []*Lease
		for range 50 {
			wg.Go(func() {
				l, err := Acquire(wctx, "db")
				switch {
				case err == nil:
					mu.Lock()
					granted = append(granted, l)
					mu.Unlock()
				case !errors.Is(err, context.Canceled):
					t.Errorf("a cancelled acquire: %v, want context.Canceled", err)
				}
			})
		}
		time.Sleep(50 * time.Millisecond) // the 50 are queued
		if err := held.Release(Report{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(round%5) * 250 * time.Microsecond)
		cancel()
		wg.Wait()
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
		for _, l := range granted {
			if err := l.Release(Report{}); err != nil {
				t.Fatal(err)
			}
		}
		waitHeld(t, g.addr, tk.ID(), "db", 0, c.TTL())
	}
}

// waitHeld waits until the node holds n leases of class, at most within.
func waitHeld(t *testing.T, addr string, node uint64, class string, n int64, within time.Duration) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		h := describe(t, addr, node).Classes[class].GetHeld()
		if h == n {
			return
		}
		if time.Since(start) > within {
			t.Fatalf("%d %s leases held after %s, want %d", h, class, within, n)
		}
	}
}
