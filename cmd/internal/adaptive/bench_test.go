package adaptive

import (
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// BenchmarkObserve takes one commit's batch of 1,024 events, half of them
// releases of a controlled class, as the writer goroutine hands them over.
func BenchmarkObserve(b *testing.B) {
	r := openRig(b, "", dbClass)
	defer r.close()
	evs := make([]*engine.Event, 1024)
	for i := range evs {
		evs[i] = &engine.Event{Kind: engine.KindLeaseGranted, Target: engine.ID(i + 1), Name: "db"}
		if i%2 == 1 {
			evs[i] = &engine.Event{Kind: engine.KindLeaseReleased, Target: engine.ID(i), Session: 9, Name: "db", Report: engine.Report{LatencyNanos: int64(i)}}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		r.ctl.Observe(evs)
	}
}
