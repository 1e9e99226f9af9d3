package engine

import "container/heap"

// Parking keeps a blocked head from being looked at on every grant. A group
// whose chain is full at a node inside its tenant is parked on that node, in
// a heap by priority then arrival. When a slot there frees, the node releases
// parked groups to the ready heaps, but only as many as it has free slots
// beyond those it already promised: a group it released "holds a promise"
// until it is granted, parked again or emptied. So a freed slot wakes one
// waiter, not every sibling behind the same full limit, and no parked group
// stays parked while its node has room nobody was promised (invariant I8).

// placeLocked puts a group that just got its first waiter where it belongs:
// parked on the node that blocks it inside its tenant, or on the ready heap.
func (e *Engine) placeLocked(g *group) {
	if at := g.node.blockedBelow(g.tq.tenant, g.class); at != nil {
		e.parkAtLocked(g, at)
		return
	}
	heap.Push(&g.tq.ready, g)
	e.syncRingLocked(g.tq)
}

// parkLocked moves a ready group that turned out blocked at node at onto
// at's parked heap, giving back its promise.
func (e *Engine) parkLocked(g *group, at *node) {
	heap.Remove(&g.tq.ready, g.idx)
	e.unpromiseLocked(g, true)
	e.parkAtLocked(g, at)
}

func (e *Engine) parkAtLocked(g *group, at *node) {
	g.parkedAt = at
	heap.Push(&at.class(g.class).parked, g)
}

// unpromiseLocked ends a ready group's promise. When the group leaves without
// taking the slot (refill), its parking place may release another group.
func (e *Engine) unpromiseLocked(g *group, refill bool) {
	p := g.promisedBy
	if p == nil {
		return
	}
	g.promisedBy = nil
	p.promised--
	if refill {
		e.releaseLocked(p)
	}
}

// releaseLocked hands a node's parked groups to their ready heaps while it has
// free slots not yet promised. A group blocked at another node on the way is
// parked there instead.
func (e *Engine) releaseLocked(cs *classState) {
	for len(cs.parked) > 0 && (!cs.limited || cs.limit-cs.held > int64(cs.promised)) {
		g := heap.Pop(&cs.parked).(*group)
		g.parkedAt = nil
		if at := g.node.blockedBelow(g.tq.tenant, g.class); at != nil && at != cs.node {
			e.parkAtLocked(g, at)
			continue
		}
		g.promisedBy = cs
		cs.promised++
		heap.Push(&g.tq.ready, g)
		e.syncRingLocked(g.tq)
	}
}

// slotFreedLocked runs when a node's class may have room again: a lease on
// its chain ended or its limit changed. A tenant blocked by its own limit
// rejoins the ring; parked groups are released.
func (e *Engine) slotFreedLocked(cs *classState) {
	if tq := cs.blockedTenant; tq != nil {
		cs.blockedTenant = nil
		tq.blocked = false
		e.syncRingLocked(tq)
	}
	e.releaseLocked(cs)
}

// blockTenantLocked takes a tenant whose own limit is full out of the ring
// until a slot on the tenant node frees.
func (e *Engine) blockTenantLocked(tq *tenantQueue) {
	tq.blocked = true
	tq.tenant.class(tq.cq.class).blockedTenant = tq
	e.syncRingLocked(tq)
}
