package engine

import (
	"fmt"
	"testing"
)

// BenchmarkBoundRefusal measures a call refused at a bound while the tenant
// holds little and while it holds 100 times as much: a create at the node
// bound (1,000 or 100,000 nodes) and a consume of a new name at the name
// bound (100 or 10,000 names). The check reads a count the engine keeps, so
// each pair costs the same.
func BenchmarkBoundRefusal(b *testing.B) {
	for _, size := range []int{1_000, 100_000} {
		b.Run(fmt.Sprint("nodes=", size), func(b *testing.B) {
			f, tenant := boundBench(b, BoundNodes, size)
			for i := range size {
				f.sysCreate(tenant, Spec{Name: fmt.Sprint("n", i)})
			}
			refuseLoop(b, func() error {
				_, err := f.e.Create(&Call{}, tenant, Spec{Name: "over"})
				return err
			})
		})
	}
	for _, size := range []int{100, 10_000} {
		b.Run(fmt.Sprint("names=", size), func(b *testing.B) {
			f, tenant := boundBench(b, BoundNames, size)
			for i := range size {
				must(b, f.e.Consume(&Call{}, tenant, fmt.Sprint("r", i), 1))
			}
			refuseLoop(b, func() error { return f.e.Consume(&Call{}, tenant, "over", 1) })
		})
	}
}

// boundBench is an engine with one tenant whose bound b is size.
func boundBench(b *testing.B, bound Bound, size int) (*fixture, ID) {
	f := newFixture(b)
	tenant := f.tenant(Spec{Name: "t"})
	limits := DefaultBounds()
	limits[bound] = int64(size)
	must(b, f.e.SetBounds(BoundsConfig{Default: DefaultBounds(), PerTenant: map[ID]Bounds{tenant: limits}}))
	return f, tenant
}

// refuseLoop times call, which must be refused by a bound every time.
func refuseLoop(b *testing.B, call func() error) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := call().(*BoundError); !ok {
			b.Fatal("the call was not refused by a bound")
		}
	}
}
