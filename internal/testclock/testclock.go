// Package testclock is a clock that tests move by hand, for the engine and
// everything built on it. Safe for concurrent use.
package testclock

import (
	"sync"
	"time"
)

// Clock tells the time it was last set to.
type Clock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

// New returns a clock at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set puts the clock at t, which may be earlier.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
