package engine

import "slices"

// kidOrder keeps a node's children in id order, so that a page of them is
// found in O(log n) and copied in O(page) under the engine lock, however many
// children the node has. Ids only grow, so a new child goes at the end; a
// removed child leaves a hole, and the holes are squeezed out once they
// outnumber the children, so removal costs O(log n) amortized. The zero
// value is empty.
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
	if k.holes*2 > len(k.ids) {
		k.squeeze()
	}
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

// page returns at most size children with ids above after, in id order, and
// the id to pass as after for the next page: 0 when no child follows.
func (k *kidOrder) page(after ID, size int) ([]*node, ID) {
	i, found := slices.BinarySearch(k.ids, after)
	if found {
		i++
	}
	var out []*node
	for ; i < len(k.kids); i++ {
		n := k.kids[i]
		if n == nil {
			continue
		}
		if len(out) == size {
			return out, out[len(out)-1].id
		}
		out = append(out, n)
	}
	return out, 0
}
