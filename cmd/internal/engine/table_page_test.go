package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// pages reads every page of id's children, size at a time, and returns
// their ids in the order read. It fails the test if a page is longer than
// size or a cursor does not move forward.
func pages(t *testing.T, e *Engine, id ID, size int) []ID {
	t.Helper()
	var got []ID
	var after ID
	for {
		_, kids, next, err := e.Describe(&Call{}, id, &Page{After: after, Size: size})
		must(t, err)
		want := size
		if size == 0 {
			want = DefaultPageSize
		}
		if len(kids) > want {
			t.Fatalf("a page of %d children; want at most %d", len(kids), want)
		}
		for _, k := range kids {
			got = append(got, k.ID)
		}
		if next == 0 {
			return got
		}
		if len(kids) == 0 || next < kids[len(kids)-1].ID || next <= after {
			t.Fatalf("page after %d ends at cursor %d with %d children", after, next, len(kids))
		}
		after = next
	}
}

// TestDescribePages checks that describe hands out a node's children a
// bounded page at a time, in id order, every child once, with no empty page
// at the end; children removed between two pages are simply not in the
// later one, and a restored engine pages the same.
func TestDescribePages(t *testing.T) {
	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	wide := f.tenant(Spec{Name: "wide"})
	var all []ID
	for i := range 2500 {
		all = append(all, f.create(0, wide, Spec{Name: fmt.Sprint("c", i)}))
	}
	if got := pages(t, f.e, wide, 0); !slices.Equal(got, all) {
		t.Fatalf("default pages: %d children; want the %d in id order", len(got), len(all))
	}
	if got := pages(t, f.e, wide, 2500); !slices.Equal(got, all) {
		t.Fatalf("one page of 2500: %d children", len(got))
	}
	_, kids, next, err := f.e.Describe(f.sys(), wide, &Page{Size: 10})
	must(t, err)
	if len(kids) != 10 || next != all[9] {
		t.Fatalf("a page of 10: %d children, next %d; want 10 and %d", len(kids), next, all[9])
	}
	var kept []ID
	for i, id := range all {
		if i%3 == 0 || i > 2000 {
			must(t, f.e.Cancel(f.sys(), id))
			continue
		}
		kept = append(kept, id)
	}
	f.clock.Advance(2 * time.Second)
	f.e.Reap(f.sys())
	if err := checkChildOrder(f.e); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 7, 1000, MaxPageSize} {
		if got := pages(t, f.e, wide, size); !slices.Equal(got, kept) {
			t.Fatalf("pages of %d after removals: %d children; want %d", size, len(got), len(kept))
		}
	}
	r, err := Restore(Options{Clock: f.clock, Sink: f.rec}, f.e.Dump())
	must(t, err)
	if got := pages(t, r, wide, 333); !slices.Equal(got, kept) {
		t.Fatalf("restored: %d children; want %d", len(got), len(kept))
	}
}

// TestDescribePageSizeBounds checks that a page size outside 0 to
// MaxPageSize is refused, naming the field.
func TestDescribePageSizeBounds(t *testing.T) {
	f := newFixture(t)
	for _, size := range []int{-1, MaxPageSize + 1, 1 << 40} {
		if _, _, _, err := f.e.Describe(f.sys(), RootID, &Page{Size: size}); !isInvalid(err, "page_size") {
			t.Fatalf("page size %d: %v; want invalid page_size", size, err)
		}
	}
}

// TestKidOrderAgreesWithASet drives the child order with random adds (in
// and out of order, as a restore may) and removals against a plain set.
func TestKidOrderAgreesWithASet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var k kidOrder
		set := map[ID]*node{}
		next := ID(1)
		for range 300 {
			switch op := rng.IntN(10); {
			case op < 5:
				n := &node{id: next}
				next += ID(1 + rng.IntN(3))
				set[n.id] = n
				k.add(n)
			case op < 6:
				n := &node{id: ID(rng.IntN(int(next)) + 1)}
				if set[n.id] == nil {
					set[n.id] = n
					k.add(n)
				}
			default:
				id := ID(rng.IntN(int(next)) + 1)
				delete(set, id)
				k.remove(id)
			}
		}
		var want []ID
		for id := range set {
			want = append(want, id)
		}
		slices.Sort(want)
		var got []ID
		after := ID(0)
		for {
			kids, nx := k.page(after, 1+rng.IntN(20))
			for _, n := range kids {
				got = append(got, n.id)
			}
			if nx == 0 {
				break
			}
			after = nx
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: paged %v; want %v", round, got, want)
		}
	}
}
