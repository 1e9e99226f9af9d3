package durable

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// TestWaitInMemoryNeedsNoCommit checks that with the record in memory an
// answer does not wait for the writer goroutine (and Durable counts what
// was accepted), while with a durable record it waits for the commit: the
// writer is held inside Committed after the first event, so the second
// event's commit cannot happen.
func TestWaitInMemoryNeedsNoCommit(t *testing.T) {
	cases := map[string]struct {
		url      func(t *testing.T) string
		volatile bool
	}{
		"memory": {func(*testing.T) string { return "" }, true},
		"sqlite": {backends(t)["sqlite"], false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			held, release := make(chan struct{}), make(chan struct{})
			first := true
			var published atomic.Uint64 // the last event handed to Committed
			committed := func(evs []*engine.Event) {
				published.Store(evs[len(evs)-1].Seq)
				if first {
					first = false
					close(held)
					<-release
				}
			}
			s, err := Open(ctx, Options{URL: tc.url(t), Clock: newClock(), Committed: committed, Logger: quiet()})
			must(t, err)
			defer func() { must(t, s.Close(ctx)) }()
			defer close(release)
			c := &engine.Call{}
			_, err = s.Engine.Create(c, engine.RootID, engine.Spec{Name: "first"})
			must(t, err)
			<-held
			c = &engine.Call{}
			_, err = s.Engine.Create(c, engine.RootID, engine.Spec{Name: "second"})
			must(t, err)
			wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			err = s.Wait(wctx, c.Seq)
			switch {
			case tc.volatile && err != nil:
				t.Fatalf("Wait(%d) in memory with the writer held: %v, want nil at once", c.Seq, err)
			case !tc.volatile && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("Wait(%d) on a durable record with the writer held: %v, want the deadline", c.Seq, err)
			}
			if p := published.Load(); p >= c.Seq {
				t.Fatalf("event %d committed (published up to %d) while the writer is held", c.Seq, p)
			}
			if d := s.Durable(); tc.volatile != (d >= c.Seq) {
				t.Fatalf("Durable() = %d with event %d accepted and not committed; want it covered only in memory", d, c.Seq)
			}
		})
	}
}
