package engine

import (
	"slices"
	"strconv"
	"testing"
)

// TestResSet: a set finds each resource it was given, and only those,
// whether it holds them in its list alone or has built its map, and yields
// them in the order they came.
func TestResSet(t *testing.T) {
	for _, size := range []int{0, 1, resIndexAt, resIndexAt + 1, 3 * resIndexAt} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			var s resSet
			var states []*resState
			var names []string
			for i := range size {
				rs := &resState{cap: int64(i)}
				names, states = append(names, "r"+strconv.Itoa(i)), append(states, rs)
				s.add(names[i], rs)
			}
			if s.len() != size {
				t.Fatalf("len %d, want %d", s.len(), size)
			}
			for i, r := range names {
				if got := s.get(r); got != states[i] {
					t.Fatalf("get(%s) = %p, want %p", r, got, states[i])
				}
				if got := s.find(r); got != i {
					t.Fatalf("find(%s) = %d, want %d", r, got, i)
				}
			}
			if s.get("absent") != nil || s.find("absent") != -1 {
				t.Fatal("found a resource the set was not given")
			}
			var yielded []string
			for r, rs := range s.all() {
				if rs != s.get(r) {
					t.Fatalf("all yields %s with the wrong state", r)
				}
				yielded = append(yielded, r)
			}
			if !slices.Equal(yielded, names) {
				t.Fatalf("all yields %v, want %v", yielded, names)
			}
		})
	}
}

// TestFindResKeepsAside: the resource a node keeps aside is the one asked
// for, however lookups and new resources interleave, below and past the
// size at which the set builds its map.
func TestFindResKeepsAside(t *testing.T) {
	n := &node{}
	var names []string
	for i := range 2 * resIndexAt {
		r := "r" + strconv.Itoa(i)
		names = append(names, r)
		n.resource(r).cap = int64(i)
		for j, q := range names {
			for range 2 { // the second finds it aside
				if rs := n.findRes(q); rs == nil || rs.cap != int64(j) {
					t.Fatalf("with %d resources, findRes(%s) = %+v, want cap %d", i+1, q, rs, j)
				}
			}
		}
		if n.findRes("absent") != nil {
			t.Fatal("found a resource the node does not have")
		}
	}
}
