package engine

// tenantUsage is what one tenant holds against its bounds. Every change,
// live or replayed, keeps it up to date as it happens, so checking a bound
// costs O(1) and nothing walks the tree. It hangs off the tenant node;
// the root has none. Guarded by Engine.mu.
type tenantUsage struct {
	held     Bounds            // what the tenant holds of each bound
	refused  [NumBounds]uint64 // calls each bound refused since governord started
	res      map[string]int    // resource name: how many nodes of the subtree carry it
	cls      map[string]int    // class name: the same
	declared map[string]bool   // the engine's: names that count against no tenant
}

func newUsage(declared map[string]bool) *tenantUsage {
	return &tenantUsage{res: make(map[string]int), cls: make(map[string]int), declared: declared}
}

// usageOf returns the usage of tenant node t, nil for the root or nil.
func usageOf(t *node) *tenantUsage {
	if t == nil {
		return nil
	}
	return t.usage
}

// use returns the usage of n's tenant, nil if n lies under no tenant.
func (n *node) use() *tenantUsage { return usageOf(n.tenant) }

// add moves what the tenant holds of b by d. A nil usage counts nothing.
func (u *tenantUsage) add(b Bound, d int64) {
	if u != nil {
		u.held[b] += d
	}
}

// carry counts one more (d = 1) or one fewer (d = -1) node carrying name,
// a resource name when res is set and a class name otherwise, and keeps the
// count of distinct undeclared names in step. A nil usage counts nothing.
func (u *tenantUsage) carry(name string, res bool, d int) {
	if u == nil {
		return
	}
	m := u.cls
	if res {
		m = u.res
	}
	was := m[name]
	if was+d == 0 {
		delete(m, name)
	} else {
		m[name] = was + d
	}
	if u.declared[name] {
		return
	}
	switch {
	case was == 0:
		u.held[BoundNames]++
	case was+d == 0:
		u.held[BoundNames]--
	}
}

// fresh reports whether name, a resource name when res is set and a class
// name otherwise, would be a new name for the tenant: one no node of its
// subtree carries and the file does not declare.
func (u *tenantUsage) fresh(name string, res bool) bool {
	m := u.cls
	if res {
		m = u.res
	}
	return m[name] == 0 && !u.declared[name]
}

// nodeGone takes forgotten node n out of its tenant's counts: the node
// itself, unless it is the tenant node, and the names it carried.
func nodeGone(n *node) { countNode(n, -1) }

// countNode moves n's tenant's counts by d (1 or -1) for n: the node itself,
// unless it is the tenant node, and the names it carries.
func countNode(n *node, d int) {
	u := n.use()
	if u == nil {
		return
	}
	if n.tenant != n {
		u.add(BoundNodes, int64(d))
	}
	for r := range n.res.all() {
		u.carry(r, true, d)
	}
	for c := range n.cls {
		u.carry(c, false, d)
	}
}

// recountLocked counts what every tenant holds from scratch, keeping the
// refusals counted so far. It walks the whole tree, so it runs only when a
// snapshot is restored and when bounds are set.
func (e *Engine) recountLocked() {
	for n := range e.root.order.all() {
		if n.usage == nil {
			n.usage = newUsage(e.bounds.declared)
			continue
		}
		old := n.usage
		*n.usage = *newUsage(e.bounds.declared)
		n.usage.refused, n.usage.held[BoundWatches] = old.refused, old.held[BoundWatches] // watches are the server's, not in the tree
	}
	for _, n := range e.nodes {
		countNode(n, 1)
	}
	for _, s := range e.sessions {
		s.scope.use().add(BoundSessions, 1)
	}
	for _, cq := range e.queues {
		for id, tq := range cq.tenants {
			if t := e.nodes[id]; t != nil {
				t.use().add(BoundQueued, int64(tq.waiters))
			}
		}
	}
}
