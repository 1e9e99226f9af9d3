package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// sameNamed lists p's children named name from byName's head along the
// older links, and checks that the newer links mirror them.
func sameNamed(t *testing.T, e *Engine, p ID, name string) []ID {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []ID
	var newer *node
	for n := e.nodes[p].byName[name]; n != nil; n = n.older {
		if n.newer != newer {
			t.Fatalf("node %d's newer link is %v, want %v", n.id, n.newer, newer)
		}
		ids = append(ids, n.id)
		newer = n
	}
	return ids
}

// TestSameNamedSiblingsLeaveInAnyOrder removes four children of one name
// one at a time, in several orders, and checks after each removal that the
// name leads to the newest child left, and the rest follow newest first,
// live and once the state is restored.
func TestSameNamedSiblingsLeaveInAnyOrder(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			f := newFixture(t)
			ten := f.tenant(Spec{Name: "a"})
			var kids []ID
			for range 4 {
				kids = append(kids, f.sysCreate(ten, Spec{Name: "w"}))
			}
			f.sysCreate(ten, Spec{Name: "other"})
			left := slices.Clone(kids)
			for _, i := range order {
				must(t, f.e.Cancel(f.sys(), kids[i]))
				f.clock.Advance(DefaultSettings().NodeRetention + time.Second)
				f.e.Reap(f.sys())
				left = slices.DeleteFunc(left, func(id ID) bool { return id == kids[i] })
				want := slices.Clone(left)
				slices.Reverse(want)
				if got := sameNamed(t, f.e, ten, "w"); !slices.Equal(got, want) {
					t.Fatalf("after removing %d, the children named w are %v, want %v", kids[i], got, want)
				}
				restored, err := Restore(Options{Clock: f.clock}, f.e.Dump())
				must(t, err)
				if got := sameNamed(t, restored, ten, "w"); !slices.Equal(got, want) {
					t.Fatalf("restored after removing %d, the children named w are %v, want %v", kids[i], got, want)
				}
			}
		})
	}
}
