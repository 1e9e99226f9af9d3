package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
)

// reaper takes, every interval, the decisions time has made that no call
// has taken yet (engine.Reap), and waits until they are on record.
// Correctness never depends on it: every call that touches an expired
// object decides the same; the reaper only makes freed capacity reach
// waiters promptly.
type reaper struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned
	once   sync.Once
}

// startReaper starts the reaper goroutine; stop ends it.
func startReaper(st *durable.Store, every time.Duration, log *slog.Logger) *reaper {
	ctx, cancel := context.WithCancel(context.Background())
	r := &reaper{cancel: cancel, done: make(chan struct{})}
	go r.run(ctx, st, every, log)
	return r
}

func (r *reaper) run(ctx context.Context, st *durable.Store, every time.Duration, log *slog.Logger) {
	defer close(r.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := st.Room(ctx); err != nil {
			return
		}
		c := &engine.Call{}
		if n := st.Engine.Reap(c); n > 0 {
			log.Debug("reaped", "events", n)
		}
		if err := st.Wait(ctx, c.Seq); err != nil {
			return // stopped, or the record failed, which the supervisor handles
		}
	}
}

// stop ends the goroutine and waits for it. It may be called more than
// once, and on a nil reaper (a cluster member's, whose leader reaps).
func (r *reaper) stop() {
	if r == nil {
		return
	}
	r.once.Do(r.cancel)
	<-r.done
}
