package engine

import (
	"fmt"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/pace"
)

// TestLongTaskRestsAfterEachRunOfSteps checks the pacer's promise on a real
// long task: cancelling a node of 20,000 children, in hundreds of steps,
// rests pace.Rest after every pace.Run of steps. The machine's time is
// replaced by one that moves 100 µs each time it is read, so a rest falls
// due every few steps.
func TestLongTaskRestsAfterEachRunOfSteps(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "wide"})
	wide := f.sysCreate(ten, Spec{Name: "wide"})
	for i := range 20_000 {
		f.sysCreate(wide, Spec{Name: fmt.Sprint("c", i)})
	}
	now := time.Unix(0, 0)
	var rests []time.Duration
	f.e.wall = pace.Clock{
		Now:   func() time.Time { now = now.Add(100 * time.Microsecond); return now },
		Sleep: func(d time.Duration) { rests = append(rests, d) },
	}
	before := len(f.rec.events)
	must(t, f.e.Cancel(f.sys(), wide))
	steps := 0
	for _, ev := range f.rec.events[before:] {
		if ev.Kind == KindNodesEnded {
			steps++
		}
	}
	if steps < 100 {
		t.Fatalf("the cancel took %d steps; the test needs hundreds", steps)
	}
	// A rest is due once pace.Run has passed since the last: every 10 reads of
	// the clock, and a step reads it once, a rest twice.
	if want := steps / 11; len(rests) < want {
		t.Fatalf("%d steps rested %d times, want at least %d", steps, len(rests), want)
	}
	for _, d := range rests {
		if d != pace.Rest {
			t.Fatalf("a rest of %v, want %v", d, pace.Rest)
		}
	}
}

// TestEveryLongTaskRests checks SPEC §2's promise for each long task the
// engine takes in parts besides a cancel: a snapshot's capture of 20,000
// changed nodes, a page of 5,000 children copied in chunks, and the
// removal of 20,000 ended nodes each rest once a run of their parts has
// taken pace.Run, on a machine time that moves 100 µs each time it is read.
func TestEveryLongTaskRests(t *testing.T) {
	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	wide := f.sysCreate(f.tenant(Spec{Name: "wide"}), Spec{Name: "wide"})
	for i := range 20_000 {
		f.sysCreate(wide, Spec{Name: fmt.Sprint("c", i)})
	}
	now, rests := time.Unix(0, 0), 0
	f.e.wall = pace.Clock{
		Now:   func() time.Time { now = now.Add(100 * time.Microsecond); return now },
		Sleep: func(time.Duration) { rests++ },
	}
	for _, task := range []struct {
		name string
		run  func()
	}{
		{"capture", func() { f.e.Capture() }},
		{"describe", func() {
			_, kids, _, err := f.e.Describe(f.sys(), wide, &Page{Size: MaxPageSize})
			must(t, err)
			if len(kids) != MaxPageSize {
				t.Fatalf("a page of %d children, want %d", len(kids), MaxPageSize)
			}
		}},
		{"removal", func() {
			must(t, f.e.Cancel(f.sys(), wide))
			rests = 0 // the cancel's rests are TestLongTaskRestsAfterEachRunOfSteps's
			f.clock.Advance(2 * time.Second)
			f.e.Reap(f.sys())
			if n := f.e.Stats().Nodes; n > 10 {
				t.Fatalf("%d nodes left after the removal", n)
			}
		}},
	} {
		rests = 0
		task.run()
		if rests == 0 {
			t.Errorf("the %s never rested", task.name)
		}
	}
}
