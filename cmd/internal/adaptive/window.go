package adaptive

import (
	"sync"

	"governor.dev/governor/cmd/internal/engine"
)

// keep is how many latencies a window holds; the p95 is taken over the most
// recent keep reports, while the sample count and overload share cover all.
const keep = 4096

// window gathers one class's release reports between decisions. add and
// restart run on the store's writer goroutine and never block for long; take
// runs on the controller's.
type window struct {
	mu         sync.Mutex // guards the fields below
	before     engine.ID  // leases up to this id were granted before the limit last changed
	samples    int
	overloaded int
	ring       []int64 // latencies, at most keep; next is the oldest once full
	next       int
}

// add counts the report of lease, unless the lease was granted before the
// limit last changed: its report describes the old limit.
func (w *window) add(lease engine.ID, r engine.Report) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if lease <= w.before {
		return
	}
	w.samples++
	if r.Overloaded {
		w.overloaded++
	}
	if len(w.ring) < keep {
		w.ring = append(w.ring, r.LatencyNanos)
		return
	}
	w.ring[w.next] = r.LatencyNanos
	w.next = (w.next + 1) % keep
}

// restart drops every report gathered so far and, from now on, those of
// leases up to id: the limit has just changed.
func (w *window) restart(id engine.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.before = max(w.before, id)
	w.clearLocked()
}

// take empties the window and returns what it held, if it held at least
// atLeast reports; otherwise it leaves the reports for the next decision.
func (w *window) take(atLeast int) (summary, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.samples < atLeast {
		return summary{}, false
	}
	s := summary{samples: w.samples, overloaded: w.overloaded, latencies: w.ring}
	w.clearLocked()
	return s, true
}

func (w *window) clearLocked() {
	w.samples, w.overloaded, w.ring, w.next = 0, 0, nil, 0
}
