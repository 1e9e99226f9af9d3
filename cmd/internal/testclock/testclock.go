// Package testclock has the clocks of tests: Clock, which tests move by hand,
// for the engine and everything built on it (safe for concurrent use), and
// ProcessCPU, which benchmarks read their own cost on.
package testclock

import (
	"sync"
	"syscall"
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

// ProcessCPU is the CPU time this process has used, user and system. On a
// shared machine it measures a benchmark's own cost where wall time measures
// the neighbours too.
func ProcessCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		panic(err)
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
