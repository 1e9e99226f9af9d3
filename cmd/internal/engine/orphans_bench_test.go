package engine

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSessionEndHold measures the hold of the engine lock in which a
// session owning k nodes, children of its tenant, is closed: the steps that end the nodes, each a
// hold of its own, are left out.
func BenchmarkSessionEndHold(b *testing.B) {
	for _, k := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint("nodes=", k), func(b *testing.B) {
			f := newFixture(b)
			ten := f.tenant(Spec{Name: "t"})
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				s := f.session(ten, time.Hour)
				for j := range k {
					f.create(s, ten, Spec{Name: fmt.Sprint("n", i, ".", j)})
				}
				f.rec.events = nil
				b.StartTimer()
				must(b, f.e.closeSession(&Call{Session: s}))
				b.StopTimer()
				f.e.steps(f.sys(), f.e.orphanStepLocked)
				f.e.finishEnds(f.sys())
				b.StartTimer()
			}
		})
	}
}
