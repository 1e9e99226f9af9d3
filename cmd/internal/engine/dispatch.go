package engine

// syncRingLocked keeps a tenant in its class's ring exactly while it has a
// ready group and its own limit is not full.
func (e *Engine) syncRingLocked(tq *tenantQueue) {
	want := len(tq.ready) > 0 && !tq.blocked
	switch {
	case want && !tq.inRing:
		e.ringJoinLocked(tq)
	case !want && tq.inRing:
		e.ringLeaveLocked(tq)
	}
}

// ringJoinLocked adds a tenant at the end of the current round: just before
// the cursor.
func (e *Engine) ringJoinLocked(tq *tenantQueue) {
	cq := tq.cq
	tq.inRing = true
	cq.size++
	if cq.cursor == nil {
		tq.prev, tq.next = tq, tq
		cq.cursor = tq
		return
	}
	last := cq.cursor.prev
	tq.prev, tq.next = last, cq.cursor
	last.next = tq
	cq.cursor.prev = tq
}

// ringLeaveLocked takes a tenant out of the ring; it loses the rest of its
// round.
func (e *Engine) ringLeaveLocked(tq *tenantQueue) {
	cq := tq.cq
	tq.inRing = false
	tq.deficit = 0
	cq.size--
	if cq.size == 0 {
		cq.cursor = nil
	} else {
		tq.prev.next, tq.next.prev = tq.next, tq.prev
		if cq.cursor == tq {
			cq.cursor = tq.next
		}
	}
	tq.prev, tq.next = nil, nil
}

func (e *Engine) wantDispatch(class string) {
	if cq := e.queues[class]; e.replay || cq == nil || cq.size == 0 {
		return
	}
	for _, c := range e.dispatch {
		if c == class {
			return
		}
	}
	e.dispatch = append(e.dispatch, class)
}

// dispatchLocked grants queued acquires of class while any fits.
func (e *Engine) dispatchLocked(class string, now int64) {
	for {
		cq := e.queues[class]
		if cq == nil || cq.size == 0 || !fitsNode(e.root, class) {
			return
		}
		if !e.serveOneLocked(cq, now) {
			return
		}
	}
}

func fitsNode(n *node, class string) bool {
	cs := n.cls[class]
	return cs == nil || !cs.limited || cs.held < cs.limit
}

// serveOneLocked makes one grant, to the first tenant from the cursor that has
// an acquire that fits, and reports whether it did. An acquire that fits on
// a node being ended a step at a time fails instead, with its group; that
// counts as done too.
func (e *Engine) serveOneLocked(cq *classQueue, now int64) bool {
	tq := cq.cursor
	for n := cq.size; n > 0 && cq.size > 0; n-- {
		next := tq.next
		g := e.firstFitLocked(tq)
		if g == nil {
			tq.deficit = 0
			tq = next
			continue
		}
		if g.node.doomed() {
			e.failGroupLocked(g, ErrNodeEnded) // its node is being ended a step at a time
			return true
		}
		cq.cursor = tq
		if tq.deficit <= 0 {
			tq.deficit = tq.tenant.weightOrOne()
		}
		tq.deficit--
		e.grantWaiterLocked(g.head, now)
		if tq.inRing && tq.deficit == 0 {
			cq.cursor = tq.next
		}
		return true
	}
	return false
}

// firstFitLocked returns the tenant's first ready group (by priority, then
// arrival) whose whole chain has a free slot. A group found blocked inside
// the tenant is parked on the way; a tenant whose own limit is full leaves
// the ring. The root was checked by the caller.
func (e *Engine) firstFitLocked(tq *tenantQueue) *group {
	class := tq.cq.class
	if !fitsNode(tq.tenant, class) {
		e.blockTenantLocked(tq)
		return nil
	}
	for len(tq.ready) > 0 {
		g := tq.ready[0]
		at := g.node.blockedBelow(tq.tenant, class)
		if at == nil {
			return g
		}
		e.parkLocked(g, at)
	}
	e.syncRingLocked(tq)
	return nil
}
