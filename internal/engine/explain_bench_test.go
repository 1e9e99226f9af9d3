package engine

import (
	"fmt"
	"testing"
)

// BenchmarkExplain explains a waiter behind a full limit held by a few
// leases and by many, each on a node of its own: the work is bounded, so
// the two cost about the same.
func BenchmarkExplain(b *testing.B) {
	for _, holders := range []int{100, 20000} {
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
