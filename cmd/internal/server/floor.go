package server

import (
	"slices"
	"sync"
	"time"
)

// floorSamples is how many recent grants the floor is taken over.
const floorSamples = 16

// recordFloor is the shortest time a recent grant took from the engine to
// the record. A grant always takes at least one commit to be recorded, so
// an acquire whose caller gives up sooner than the fastest recent grant
// was recorded would almost surely lose its lease before it is recorded:
// it is refused before the engine grants, so that no grant and release are
// written for it. The zero value knows no grant and so refuses nothing. It
// is safe for concurrent use.
type recordFloor struct {
	mu     sync.Mutex // guards the fields below
	recent [floorSamples]time.Duration
	n      int // samples taken, up to floorSamples
	next   int // where the next sample goes
}

// note records that a grant took d to reach the record.
func (f *recordFloor) note(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recent[f.next] = d
	f.next = (f.next + 1) % floorSamples
	f.n = min(f.n+1, floorSamples)
}

// get returns the floor: the shortest of the recent samples, 0 with none.
func (f *recordFloor) get() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return 0
	}
	return slices.Min(f.recent[:f.n])
}
