package eventlog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkGroupCommit is the bare write path: each producer applies an
// event (Room, then Add of a ~100-byte entry under a shared lock) and waits
// until it is on record, as a handler does before it replies.
func BenchmarkGroupCommit(b *testing.B) {
	for _, bc := range backendCases {
		for _, producers := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/producers=%d", bc.name, producers), func(b *testing.B) {
				benchGroupCommit(b, openURL(b, bc.newURL(b)), producers)
			})
		}
	}
}

func benchGroupCommit(b *testing.B, be Backend, producers int) {
	var batches, busy atomic.Int64
	w := NewWriter(be, 0, WriterOptions{Logger: quiet, OnCommit: func(_ int, d time.Duration) {
		batches.Add(1)
		busy.Add(int64(d))
	}})
	w.Start()
	defer w.Stop(context.Background())
	e := newEngine(w, 0)
	ctx := context.Background()
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, err := e.do(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	n := float64(max(batches.Load(), 1))
	b.ReportMetric(float64(b.N)/n, "events/commit")
	b.ReportMetric(float64(busy.Load())/n/1e6, "ms/commit")
}
