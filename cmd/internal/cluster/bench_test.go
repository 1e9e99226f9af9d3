package cluster

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// BenchmarkClusterConsume charges one token per call through a 3-member
// cluster in this process, from 64 and 256 concurrent callers, each with a
// session of its own, and reports consumes per second.
func BenchmarkClusterConsume(b *testing.B) {
	for _, callers := range []int{64, 256} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			tc := newCluster(b, 3, nil)
			l := tc.leader()
			nd, err := l.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "bench", Detached: true})
			if err != nil {
				b.Fatal(err)
			}
			sessions := make([]engine.ID, callers)
			for i := range sessions {
				s, err := l.OpenSession(&engine.Call{}, engine.RootID, time.Hour, [32]byte{byte(i), byte(i >> 8), 1})
				if err != nil {
					b.Fatal(err)
				}
				sessions[i] = s.ID
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			var failed atomic.Value
			b.ResetTimer()
			start := time.Now()
			for _, s := range sessions {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						if err := l.Consume(&engine.Call{Session: s}, nd.ID, "tokens", 1); err != nil {
							failed.Store(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "consumes/s")
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			if got := used(b, l, nd.ID); got != int64(b.N) {
				b.Fatalf("%d consumes acknowledged, %d tokens used", b.N, got)
			}
		})
	}
}
