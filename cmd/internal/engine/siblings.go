package engine

// A node's children of one name are a list, newest first: byName holds its
// head and each child links to the next older and newer one. Children are
// adopted in id order, so the list stays in id order; taking a child out
// costs O(1) whatever the number of its siblings, live and on replay.

// adopt hangs n under p as p's newest child of its name. n must have a
// larger id than every child p has of that name.
func (p *node) adopt(n *node) {
	if p.order == nil {
		p.order = &kidOrder{}
		p.byName = make(map[string]*node)
	}
	p.order.add(n)
	if n.state == Active {
		p.activeKids++
	}
	if older := p.byName[n.name]; older != nil {
		n.older, older.newer = older, n
	}
	p.byName[n.name] = n
}

// disown takes n out of p's children; the next newer child of its name, or
// else the next older, takes its place in the list.
func (p *node) disown(n *node) {
	p.order.remove(n.id)
	if n.state == Active {
		p.activeKids--
	}
	switch {
	case n.newer != nil:
		n.newer.older = n.older
	case n.older != nil:
		p.byName[n.name] = n.older
	default:
		delete(p.byName, n.name)
	}
	if n.older != nil {
		n.older.newer = n.newer
	}
	n.older, n.newer = nil, nil
}
