package daemon

import (
	"sync/atomic"
	"time"

	"governor.dev/governor/cmd/internal/adaptive"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/metrics"
	"governor.dev/governor/cmd/internal/server"
)

// hooks hand what the record's writer reports to those who watch it. The
// record is opened before the metrics, the controllers and the API exist
// (they are built on it), so the writer is given hooks whose observers are
// set afterwards; what is committed before that is seen by no one.
type hooks struct {
	obs atomic.Pointer[observers]
}

// observers are set together, so a batch reaches all of them or none.
type observers struct {
	metrics *metrics.Metrics
	ctrl    *adaptive.Controller
	api     *server.Server // nil until the API is built
}

func (h *hooks) set(o *observers) { h.obs.Store(o) }

// committed runs on the writer goroutine with every batch once it is on
// record, in order. Each observer only takes note; none blocks.
func (h *hooks) committed(evs []*engine.Event) {
	o := h.obs.Load()
	if o == nil {
		return
	}
	o.metrics.ObserveEvents(evs)
	o.ctrl.Observe(evs)
	if o.api != nil {
		o.api.Publish(evs)
	}
}

// commit runs on the writer goroutine after each commit.
func (h *hooks) commit(events int, d time.Duration) {
	if o := h.obs.Load(); o != nil {
		o.metrics.ObserveCommit(events, d)
	}
}
