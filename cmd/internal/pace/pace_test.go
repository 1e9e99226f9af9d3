package pace

import (
	"testing"
	"time"
)

// TestRestsAfterEachRunOfSteps paces 100 steps on a clock that moves
// 300 µs each time it is read: a rest falls due every fourth step, and
// every rest lasts Rest.
func TestRestsAfterEachRunOfSteps(t *testing.T) {
	now := time.Unix(0, 0)
	var rests []time.Duration
	var at []int
	steps := 0
	p := New(Clock{
		Now:   func() time.Time { now = now.Add(300 * time.Microsecond); return now },
		Sleep: func(d time.Duration) { rests, at = append(rests, d), append(at, steps) },
	})
	for steps = range 100 {
		p.Between()
	}
	// Step 0 starts the run; the clock passes Run at the fourth step after
	// it, and the rest reads the clock once more to start the next run, so
	// the fourth step after that rests again: after steps 4, 8, ..., 96.
	if len(rests) != 24 || at[0] != 4 || at[1] != 8 {
		t.Fatalf("100 steps rested %d times, first after steps %v; want 24, after steps 4, 8, ...", len(rests), at[:min(len(at), 3)])
	}
	for _, d := range rests {
		if d != Rest {
			t.Fatalf("a rest of %v, want %v", d, Rest)
		}
	}
}

// TestNoRestWhileTheClockStandsStill paces steps on a clock that never
// moves: no run ends, so the task only yields.
func TestNoRestWhileTheClockStandsStill(t *testing.T) {
	still := time.Unix(0, 0)
	p := New(Clock{
		Now:   func() time.Time { return still },
		Sleep: func(time.Duration) { t.Fatal("rested on a clock that stands still") },
	})
	for range 1000 {
		p.Between()
	}
}
