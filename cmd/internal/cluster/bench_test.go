package cluster

import (
	"fmt"
	"runtime"
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

// BenchmarkClusterFailover measures how long consumes are refused when the
// leader crashes (cut off and shut down) or hands its leadership over
// (planned transfer): from the fault to the first consume the cluster
// acknowledges again, with raft's timeouts as the tests set them (500 ms).
func BenchmarkClusterFailover(b *testing.B) {
	for _, kind := range []string{"crash", "transfer"} {
		b.Run(kind, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				b.StopTimer()
				tc := newCluster(b, 3, nil)
				l, li := tc.leaderIndex()
				nd, err := l.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "f", Detached: true})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				if kind == "crash" {
					tc.kill(li)
				} else if err := l.raft.LeadershipTransfer().Error(); err != nil {
					b.Fatal(err)
				}
				for !consumedOnAny(tc, nd.ID) {
					if time.Since(start) > 30*time.Second {
						b.Fatal("no consume acknowledged within 30 s of the fault")
					}
					runtime.Gosched() // leave the processors to raft between tries
				}
				total += time.Since(start)
				b.StopTimer()
				tc.shutdown()
			}
			b.ReportMetric(total.Seconds()*1000/float64(b.N), "ms/failover")
		})
	}
}

// consumedOnAny tries one consume on every live member and reports whether
// one was acknowledged.
func consumedOnAny(tc *testCluster, id engine.ID) bool {
	for _, n := range tc.liveNodes() {
		if n.Consume(&engine.Call{}, id, "tokens", 1) == nil {
			return true
		}
	}
	return false
}
