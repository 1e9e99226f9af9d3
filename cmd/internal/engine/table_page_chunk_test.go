package engine

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/testclock"
)

// steppingClock moves its clock on by step (when not 0) each time it is read.
type steppingClock struct {
	*testclock.Clock
	step atomic.Int64
}

func (c *steppingClock) Now() time.Time {
	if d := c.step.Load(); d != 0 {
		c.Advance(time.Duration(d))
	}
	return c.Clock.Now()
}

// TestDescribeCopiesInChunks checks that describe copies a page
// describeChunk children at a time, each chunk under a hold of the engine
// lock of its own: the node's deadline passing between two chunks shows in
// the children of the later chunks only, and in the node itself.
func TestDescribeCopiesInChunks(t *testing.T) {
	base := newFakeClock()
	clk := &steppingClock{Clock: base}
	rec := &recorder{}
	f := &fixture{t: t, clock: base, rec: rec, e: New(Options{Clock: clk, Sink: rec})}
	wide := f.tenant(Spec{Name: "wide", Deadline: base.Now().Add(90 * time.Second).UnixNano()})
	for i := range 1000 {
		f.create(0, wide, Spec{Name: fmt.Sprint("c", i)})
	}
	clk.step.Store(int64(time.Minute)) // each hold reads the clock once: the second is past the deadline
	inf, kids, next, err := f.e.Describe(f.sys(), wide, &Page{})
	clk.step.Store(0)
	must(t, err)
	if len(kids) != 1000 || next != 0 {
		t.Fatalf("a page of %d children, next %d; want all 1000 and 0", len(kids), next)
	}
	for i, k := range kids {
		want := Active
		if i >= describeChunk {
			want = DeadlineExceeded
		}
		if k.State != want {
			t.Fatalf("child %d of the page is %v; want %v (the first chunk copied before the deadline, the rest after)", i, k.State, want)
		}
	}
	if inf.State != DeadlineExceeded {
		t.Fatalf("the node is %v; want it as at the last chunk, DeadlineExceeded", inf.State)
	}
}

// TestKidOrderPageSkipsBoundedHoles checks that a page looks at no more than
// 2*size+1 places however long the run of holes after its cursor: it comes
// back empty with a cursor past the holes it looked at, and describe still
// fills its page from the children beyond them.
func TestKidOrderPageSkipsBoundedHoles(t *testing.T) {
	var k kidOrder
	for id := ID(1); id <= 10000; id++ {
		k.add(&node{id: id})
	}
	for id := ID(2); id <= 4001; id++ {
		k.remove(id)
	}
	kids, next := k.page(1, 10)
	if len(kids) != 0 || next != 22 {
		t.Fatalf("a page of 10 after 4000 holes: %d children, next %d; want none and 22 (21 places looked at)", len(kids), next)
	}
	kids, next = k.page(3990, 10)
	if len(kids) != 10 || kids[0].id != 4002 || next != 4011 {
		t.Fatalf("a page of 10 after the holes: %d children, next %d; want 10 from 4002, next 4011", len(kids), next)
	}

	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	wide := f.tenant(Spec{Name: "wide"})
	var ids []ID
	for i := range 3000 {
		ids = append(ids, f.create(0, wide, Spec{Name: fmt.Sprint("c", i)}))
	}
	for _, id := range ids[1:1401] {
		must(t, f.e.Cancel(f.sys(), id))
	}
	f.clock.Advance(2 * time.Second)
	f.e.Reap(f.sys())
	_, got, next, err := f.e.Describe(f.sys(), wide, &Page{Size: 100})
	must(t, err)
	if len(got) != 100 || got[1].ID != ids[1401] || next != ids[1499] {
		t.Fatalf("describe across 1400 holes: %d children, next %d; want 100, the second %d, next %d", len(got), next, ids[1401], ids[1499])
	}
}

// TestKidOrderRemovedInOrderLeavesNoHoles checks that children removed in
// id order, as a removal in steps takes them, leave no holes behind, so
// that no removal ever pays for a squeeze of the rest.
func TestKidOrderRemovedInOrderLeavesNoHoles(t *testing.T) {
	var k kidOrder
	for id := ID(1); id <= 1000; id++ {
		k.add(&node{id: id})
	}
	k.remove(7)
	for id := ID(1); id <= 500; id++ {
		k.remove(id)
		if id >= 7 && k.holes != 0 {
			t.Fatalf("after removing children 1 to %d in order: %d holes; want none", id, k.holes)
		}
	}
	if k.len() != 500 || len(k.ids) != 500 {
		t.Fatalf("%d children in %d places; want 500 in 500", k.len(), len(k.ids))
	}
}

// TestDescribePageMemoryMadeOnce checks that a page of 1000 children is
// copied into memory made once for it, not grown chunk by chunk: two
// allocations (the first chunk, the page), however many chunks fill it.
func TestDescribePageMemoryMadeOnce(t *testing.T) {
	f := newFixture(t)
	wide := f.tenant(Spec{Name: "wide"})
	for i := range 1000 {
		f.create(0, wide, Spec{Name: fmt.Sprint("c", i)})
	}
	allocs := testing.AllocsPerRun(20, func() {
		_, kids, _, err := f.e.Describe(f.sys(), wide, &Page{})
		if err != nil || len(kids) != 1000 {
			t.Fatalf("describe: %d children, %v", len(kids), err)
		}
	})
	if allocs > 2 {
		t.Fatalf("a page of 1000 children took %v allocations; want 2", allocs)
	}
}

// TestDescribePageIntoAllocatesNothing checks that a caller reading page
// after page into the memory of the first (Page.Into) makes no garbage: the
// pages of a wide node, read in a loop, leave nothing for the collector to
// do while another tenant waits on the processors (docs/performance.md, "A
// wide tenant's neighbours"). The children come back in Into's array, each
// page right.
func TestDescribePageIntoAllocatesNothing(t *testing.T) {
	f := newFixture(t)
	wide := f.tenant(Spec{Name: "wide"})
	for i := range 2500 {
		f.create(0, wide, Spec{Name: fmt.Sprint("c", i)})
	}
	page := Page{Into: make([]NodeInfo, 0, DefaultPageSize)}
	c := f.sys()
	var firsts []string // the first child's name of each page, in the last read
	allocs := testing.AllocsPerRun(20, func() {
		page.After, firsts = 0, firsts[:0]
		for {
			_, kids, next, err := f.e.Describe(c, wide, &page)
			if err != nil || len(kids) == 0 || &kids[0] != &page.Into[:1][0] {
				t.Fatalf("describe after %d: %d children, not in Into's memory, %v", page.After, len(kids), err)
			}
			firsts = append(firsts, kids[0].Name)
			if next == 0 {
				return
			}
			page.After = next
		}
	})
	if !slices.Equal(firsts, []string{"c0", "c1000", "c2000"}) || allocs > 0 {
		t.Fatalf("reading 2500 children a page at a time into Into: pages starting at %q, %v allocations a read; want c0, c1000, c2000 and none", firsts, allocs)
	}
}
