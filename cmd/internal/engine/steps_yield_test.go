package engine

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/pace"
)

// stepCounter counts, event by event, the steps ending a wide subtree takes
// and notes, at each consume, how many had been taken. Events are emitted
// under the engine lock, so the note is exact.
type stepCounter struct {
	steps     atomic.Int64
	atConsume atomic.Int64
}

func (s *stepCounter) count(ev *Event) {
	switch ev.Kind {
	case KindNodesEnded:
		s.steps.Add(1)
	case KindConsumed:
		s.atConsume.Store(s.steps.Load())
	}
}

// stepsWaited cancels a node of 50,000 children, which takes hundreds of
// steps, while another tenant consumes one call after another, and returns
// for each consume made meanwhile how many steps were taken between its
// call and its charge.
func stepsWaited(t *testing.T) []int64 {
	sink := &stepCounter{}
	f := newFixture(t)
	f.rec.audit = sink.count
	// A wall clock that stands still never lets a rest fall due, so calls
	// get in through the yield after each step alone (the rests have
	// TestLongTaskRestsAfterEachRunOfSteps).
	still := time.Now()
	f.e.wall = pace.Clock{
		Now:   func() time.Time { return still },
		Sleep: func(time.Duration) { t.Error("a long task rested on a wall clock that stands still") },
	}
	big := int64(math.MaxInt64 / 4)
	if err := f.e.SetQuota(f.sys(), RootID, "http", &big); err != nil {
		t.Fatal(err)
	}
	leaf := f.sysCreate(f.tenant(Spec{Name: "quiet"}), Spec{Name: "leaf"})
	wide := f.sysCreate(f.tenant(Spec{Name: "wide"}), Spec{Name: "wide"})
	for i := range 50_000 {
		f.sysCreate(wide, Spec{Name: fmt.Sprint("c", i)})
	}
	done := make(chan error, 1)
	go func() { done <- f.e.Cancel(f.sys(), wide) }()
	for sink.steps.Load() == 0 { // the cancel is under way
		runtime.Gosched()
	}
	var waited []int64
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if len(waited) < 3 {
				t.Fatalf("only %d consumes ran during %d steps", len(waited), sink.steps.Load())
			}
			return waited
		default:
		}
		before := sink.steps.Load()
		if err := f.e.Consume(f.sys(), leaf, "http", 1); err != nil {
			t.Fatal(err)
		}
		waited = append(waited, sink.atConsume.Load()-before)
		runtime.Gosched() // as a caller waiting for its answer leaves the processor
	}
}

// TestCallsGoBetweenTheStepsOfALongTask checks the promise of Engine.steps:
// a call waiting for the engine lock while another tenant's subtree is
// ended in steps takes the lock before the next step, or the one after,
// because the task yields its processor after each step. Left to
// sync.Mutex, the waiting call would get the lock only once it had waited
// a millisecond, tens of steps, or, with the other processor busy, not
// before the task ended.
func TestCallsGoBetweenTheStepsOfALongTask(t *testing.T) {
	checkStepsWaited(t, stepsWaited(t))
}

// TestCallsGoBetweenStepsOnOneProcessor is the same with a single
// processor, where nothing else runs while a step does.
func TestCallsGoBetweenStepsOnOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	checkStepsWaited(t, stepsWaited(t))
}

func checkStepsWaited(t *testing.T, waited []int64) {
	t.Helper()
	slices.Sort(waited)
	if median := waited[len(waited)/2]; median > 2 {
		t.Fatalf("a consume waited %d steps of the cancel at the median (%d consumes, most %d), want at most 2",
			median, len(waited), waited[len(waited)-1])
	}
}
