package server

import (
	"fmt"
	"io"
	"log/slog"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testworld"
)

// batchSink keeps the events an engine emits, to publish them as the store
// does after a commit.
type batchSink struct{ evs []*engine.Event }

func (s *batchSink) Emit(ev *engine.Event) { s.evs = append(s.evs, ev) }

// BenchmarkIdleNodeMemory reports the live heap one idle node costs a
// daemon: the engine, the durable store's snapshot image, and the watch hub's
// mirror, which learns of the nodes from committed events as it does in
// service. The tree is testworld.IdleTenant's, at about 10,000 and 1,000,000
// nodes.
func BenchmarkIdleNodeMemory(b *testing.B) {
	for _, tenants := range []int{10, 1000} {
		b.Run(fmt.Sprintf("tenants=%d", tenants), func(b *testing.B) {
			for b.Loop() {
				testworld.MeasureHeap(b, func() (any, int) {
					sink := &batchSink{}
					w := testworld.New(sink)
					h := newHub(w.Engine.Dump(), slog.New(slog.NewTextHandler(io.Discard, nil)))
					im := engine.NewImage(nil)
					for t := range tenants {
						w.IdleTenant(b, t)
						h.publish(sink.evs, w.Engine)
						clear(sink.evs)
						sink.evs = sink.evs[:0]
						im.Apply(w.Engine.Capture())
					}
					sink.evs = nil
					return []any{w, h, im}, w.Engine.Stats().Nodes
				})
			}
		})
	}
}
