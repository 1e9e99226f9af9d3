package engine

// Tick takes every decision of time due by now (a session lapsed, a
// deadline passed, a hold ran out), as every call does before anything
// else, and nothing more. A replica that applies calls at stamped times
// ticks after each, so that a read between two calls finds nothing due and
// changes nothing.
func (e *Engine) Tick() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clockLocked()
}
