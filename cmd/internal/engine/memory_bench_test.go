package engine_test

import (
	"fmt"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testworld"
)

// BenchmarkIdleNodeMemory reports the live heap one idle node costs, in a
// tree shaped like a daemon's after a while of work (testworld.IdleTenant),
// at about 10,000 and 1,000,000 nodes. "engine" is the engine alone;
// "image" adds the snapshot image the durable store keeps beside it, a
// record per node. Both are measured after a capture, as a daemon holds
// them between snapshots: the engine's change lists are empty.
func BenchmarkIdleNodeMemory(b *testing.B) {
	for _, tenants := range []int{10, 1000} {
		b.Run(fmt.Sprintf("tenants=%d/engine", tenants), func(b *testing.B) {
			for b.Loop() {
				testworld.MeasureHeap(b, func() (any, int) {
					e := idleEngine(b, tenants)
					e.Capture()
					return e, e.Stats().Nodes
				})
			}
		})
		b.Run(fmt.Sprintf("tenants=%d/image", tenants), func(b *testing.B) {
			for b.Loop() {
				testworld.MeasureHeap(b, func() (any, int) {
					e := idleEngine(b, tenants)
					im := engine.NewImage(nil)
					im.Apply(e.Capture())
					return []any{e, im}, e.Stats().Nodes
				})
			}
		})
	}
}

func idleEngine(b *testing.B, tenants int) *engine.Engine {
	w := testworld.New(nil)
	for t := range tenants {
		w.IdleTenant(b, t)
	}
	return w.Engine
}
