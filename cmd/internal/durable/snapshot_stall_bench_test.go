package durable

import (
	"context"
	"math"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/stallbench"
)

// BenchmarkSnapshotStall measures what taking a snapshot costs another
// tenant's calls. The record is in memory and holds 100,000 nodes; a
// consume on one of them runs every 100 µs (open loop) while the loop
// charges 1,000 other nodes, rests (a quiet window), then takes a snapshot
// (a busy window: the capture of what changed, its merge into the image,
// and the encoding and compression of all 100,000 nodes into the record).
// busy/quiet is the ratio of the consumes' p99 in the two kinds of window.
func BenchmarkSnapshotStall(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Clock: wallClock{}, Logger: quiet(), SnapshotEvery: math.MaxInt64})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	_, ids := bigState(b, s, 100_000, 0)
	probed, charged := ids[0], ids[1:]
	b.ResetTimer()
	stallbench.Run(b, 100*time.Microsecond, func(w *stallbench.Windows, n int) {
		c := &engine.Call{}
		for i := range 1_000 {
			if err := s.Engine.Consume(c, charged[(n*1_000+i)%len(charged)], "http", 1); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Wait(ctx, c.Seq); err != nil {
			b.Fatal(err)
		}
		w.Settle(100 * time.Millisecond)
		w.Rest(300 * time.Millisecond)
		from := w.Begin()
		if err := s.SnapshotNow(ctx); err != nil {
			b.Fatal(err)
		}
		w.Busy(from)
	}, func() error {
		c := &engine.Call{}
		if err := s.Engine.Consume(c, probed, "http", 1); err != nil {
			return err
		}
		return s.Wait(ctx, c.Seq)
	})
}
