package durable

import (
	"context"
	"sync"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// TestCommittedSeesEveryEventOnceInOrder checks the Committed hook: every
// event, once, in sequence order, and only after it is on record.
func TestCommittedSeesEveryEventOnceInOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		ctx := context.Background()
		var mu sync.Mutex
		var seen []uint64
		var s *Store
		committed := func(evs []*engine.Event) {
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range evs {
				if d := s.Durable(); ev.Seq > d {
					t.Errorf("event %d published before it was on record (durable %d)", ev.Seq, d)
				}
				seen = append(seen, ev.Seq)
			}
		}
		var err error
		s, err = Open(ctx, Options{URL: url, Clock: newClock(), Committed: committed, Logger: quiet()})
		must(t, err)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					c := &engine.Call{}
					spec := engine.Spec{Name: time.Duration(g*1000 + i).String()}
					_, _ = s.Engine.Create(c, engine.RootID, spec)
					must(t, s.Wait(ctx, c.Seq))
				}
			}()
		}
		wg.Wait()
		last := s.Engine.Seq()
		must(t, s.Close(ctx))
		mu.Lock()
		defer mu.Unlock()
		if uint64(len(seen)) != last {
			t.Fatalf("published %d events, the record holds %d", len(seen), last)
		}
		for i, seq := range seen {
			if seq != uint64(i+1) {
				t.Fatalf("event %d published at position %d", seq, i)
			}
		}
	})
}
