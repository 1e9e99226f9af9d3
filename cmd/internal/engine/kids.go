package engine

import (
	"iter"
	"slices"
)

// kidOrder keeps a node's children in id order, so that a page of them is
// found in O(log n) and copied in O(page) under the engine lock, however many
// children the node has. Ids only grow, so a new child goes at the end; a
// removed child leaves a hole, and the holes are squeezed out once they
// outnumber the children, so removal costs O(log n) amortized. The zero
// value is empty, and so is a nil one to its reading methods (len, all,
// page): a node has none until its first child.
type kidOrder struct {
	ids   []ID    // ascending; a hole keeps its id
	kids  []*node // kids[i] has id ids[i]; nil for a hole
	holes int
}

// add puts n in its place: at the end, unless a snapshot restores children
// out of order.
func (k *kidOrder) add(n *node) {
	if len(k.ids) == 0 || k.ids[len(k.ids)-1] < n.id {
		k.ids = append(k.ids, n.id)
		k.kids = append(k.kids, n)
		return
	}
	i, found := slices.BinarySearch(k.ids, n.id)
	if found {
		if k.kids[i] == nil {
			k.holes--
		}
		k.kids[i] = n
		return
	}
	k.ids = slices.Insert(k.ids, i, n.id)
	k.kids = slices.Insert(k.kids, i, n)
}

// remove takes the child with id out, if it is there.
func (k *kidOrder) remove(id ID) {
	i, found := slices.BinarySearch(k.ids, id)
	if !found || k.kids[i] == nil {
		return
	}
	k.kids[i] = nil
	k.holes++
	if i == 0 {
		k.trim()
	}
	if k.holes*2 > len(k.ids) {
		k.squeeze()
	}
}

// trim drops the holes in front, so that children removed in id order
// (as a removal in steps does) cost O(1) each and never a squeeze.
func (k *kidOrder) trim() {
	i := 0
	for i < len(k.kids) && k.kids[i] == nil {
		i++
	}
	k.ids, k.kids, k.holes = k.ids[i:], k.kids[i:], k.holes-i
}

// squeeze drops the holes.
func (k *kidOrder) squeeze() {
	j := 0
	for i, n := range k.kids {
		if n != nil {
			k.ids[j], k.kids[j] = k.ids[i], n
			j++
		}
	}
	clear(k.kids[j:])
	k.ids, k.kids, k.holes = k.ids[:j], k.kids[:j], 0
}

// len returns how many children k holds.
func (k *kidOrder) len() int {
	if k == nil {
		return 0
	}
	return len(k.ids) - k.holes
}

// all yields the children in id order. The children must not be removed
// while it runs.
func (k *kidOrder) all() iter.Seq[*node] {
	return func(yield func(*node) bool) {
		if k == nil {
			return
		}
		for _, n := range k.kids {
			if n != nil && !yield(n) {
				return
			}
		}
	}
}

// page returns at most size children with ids above after, in id order, and
// the after of the next page: 0 when no child follows. It looks at no more
// than 2*size+1 places, holes included, so that a long run of holes costs a
// page no more than that: the page may then come back short, or empty, and
// its after lies past the holes it skipped.
func (k *kidOrder) page(after ID, size int) ([]*node, ID) { return k.appendPage(nil, after, size) }

// appendPage is page appending the children to out, so that a caller may
// bring the memory.
func (k *kidOrder) appendPage(out []*node, after ID, size int) ([]*node, ID) {
	if k == nil {
		return out, 0
	}
	i, found := slices.BinarySearch(k.ids, after)
	if found {
		i++
	}
	end := min(len(k.ids), i+2*size+1)
	start := len(out)
	for ; i < end; i++ {
		n := k.kids[i]
		if n == nil {
			continue
		}
		if len(out)-start == size {
			return out, out[len(out)-1].id
		}
		out = append(out, n)
	}
	if i == len(k.ids) {
		return out, 0
	}
	return out, k.ids[i-1]
}
