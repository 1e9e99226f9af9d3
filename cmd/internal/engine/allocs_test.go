package engine

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// returner is a sink that gives each event back to the engine at once and
// keeps nothing, so that what a test counts is what the engine allocates.
type returner struct{ e *Engine }

func (r returner) Emit(ev *Event) { r.e.Recycle([]*Event{ev}) }

// TestWideEndAndRemoveAllocatePerStep checks what ending and removing a
// wide subtree allocate while another tenant waits on the processors
// (docs/performance.md, "A wide tenant's neighbours"): the list of ids of
// each step's event, made once with room for the step, and nothing per
// child. A subtree of 640 children ends in 10 steps and is removed in 11;
// growing each step's list by doubling took 7 allocations a step, and each
// ending step's page of children one more.
func TestWideEndAndRemoveAllocatePerStep(t *testing.T) {
	const runs, children = 20, 10 * defaultEndStep
	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	ten := f.tenant(Spec{Name: "t"})
	wide := make([]ID, runs+1) // AllocsPerRun calls once more than runs
	for i := range wide {
		wide[i] = f.sysCreate(ten, Spec{Name: fmt.Sprint("wide", i)})
		for j := range children {
			f.sysCreate(wide[i], Spec{Name: fmt.Sprint("c", j)})
		}
	}
	f.e.Capture() // the change lists have room for what ending and removing list
	f.e.sink = returner{f.e}
	c := f.sys()
	allocs := testing.AllocsPerRun(runs, func() {
		p := wide[0]
		wide = wide[1:]
		must(t, f.e.Cancel(c, p))
		f.clock.Advance(2 * time.Second)
		f.e.Reap(c)
		if f.e.nodes[p] != nil {
			t.Fatalf("node %d is still in the tree past its retention", p)
		}
	})
	if steps := 10 + 11; allocs > float64(steps+2) {
		t.Fatalf("ending and removing %d children took %v allocations; want about one a step, %d", children, allocs, steps)
	}
}

// TestConsumeAllocatesNothingOnceEventsComeBack checks that the quiet
// tenant's consume, its events given back by the sink as governord's
// writer does, allocates nothing in steady state: a goroutine that does not
// allocate is never made to help the collector mark (docs/performance.md,
// "What the quiet tenant waits for").
func TestConsumeAllocatesNothingOnceEventsComeBack(t *testing.T) {
	f := newFixture(t)
	big := int64(math.MaxInt64 / 4)
	must(t, f.e.SetQuota(f.sys(), RootID, "http", &big))
	quiet := f.tenant(Spec{Name: "quiet", Quotas: map[string]int64{"http": big}})
	s := f.session(quiet, time.Hour)
	leaf := f.create(s, 0, Spec{Name: "leaf", Quotas: map[string]int64{"http": big}})
	f.e.sink = returner{f.e}
	c := &Call{Session: s}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := f.e.Consume(c, leaf, "http", 1); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("a consume whose event comes back allocates %v times; want none", allocs)
	}
}
