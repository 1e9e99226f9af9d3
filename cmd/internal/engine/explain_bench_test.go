package engine

import (
	"fmt"
	"testing"
)

// BenchmarkExplain explains a waiter behind a full limit held by 100,
// 1,000 and 20,000 leases, each on a node of its own. The search for
// holders stops at 256 nodes, so past that the cost stops growing.
func BenchmarkExplain(b *testing.B) {
	for _, holders := range []int{100, 1000, 20000} {
		b.Run(fmt.Sprintf("holders=%d", holders), func(b *testing.B) {
			f := newFixture(b)
			ten := f.tenant(Spec{Name: "t", Limits: map[string]int64{"gpu": int64(holders)}})
			s := f.session(ten, 0)
			for i := range holders {
				n := f.create(s, ten, Spec{Name: fmt.Sprint("n", i)})
				f.grant(s, n, "gpu")
			}
			f.queue(s, ten, "gpu")
			c := &Call{Session: s}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.e.Explain(c, ten, "gpu", 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
