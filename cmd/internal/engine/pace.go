package engine

import (
	"runtime"
	"time"
)

// paceRun and paceRest pace a long task, one that takes the engine lock
// step by step: after every paceRun of steps it rests for paceRest, the
// lock released.
const (
	paceRun  = time.Millisecond
	paceRest = 100 * time.Microsecond
)

// wallClock is the time pacing reads and the rest it takes: the machine's,
// not the engine's Clock, since what it shares is processors. Tests replace
// it on their engine to count the rests.
type wallClock struct {
	now   func() time.Time
	sleep func(time.Duration)
}

var machineTime = wallClock{now: time.Now, sleep: time.Sleep}

// pacer is what a long task does between two of its steps, the lock
// released. It yields the processor after every step, so a call waiting
// for the lock takes it before the next step does. And it rests after every
// paceRun of steps: yielding alone keeps a processor busy, and the
// scheduler then starts calls that arrive from the network late on the
// other one; resting lets the processor poll the network. Measured
// (docs/performance.md): another tenant's consume p99 over the API while a
// subtree of 100,000 children is described and cancelled fell from 21 to
// 29 ms to 12 ms, and the wide tenant's work took 25% longer.
type pacer struct {
	clock wallClock
	since time.Time // when the task last rested, or took its first step
}

func (e *Engine) pacer() pacer { return pacer{clock: e.wall} }

func (p *pacer) between() {
	runtime.Gosched()
	now := p.clock.now()
	switch {
	case p.since.IsZero():
		p.since = now
	case now.Sub(p.since) >= paceRun:
		p.clock.sleep(paceRest)
		p.since = p.clock.now()
	}
}
