package engine

import "container/heap"

// Grant is the outcome of a queued acquire: a lease, or the reason there will
// be none. Seq is how far the record must reach before the caller is told.
type Grant struct {
	Lease LeaseInfo
	Seq   uint64
	Err   error
}

// Waiter is an acquire waiting in a fair queue. Its channel receives exactly
// one Grant. A caller that stops waiting calls Engine.Abandon.
type Waiter struct {
	ch      chan Grant
	session *session
	node    *node
	class   string
	maxHold int64
	req     string
	hash    uint64
	arrival uint64

	grp        *group // nil once the waiter has left its queue
	prev, next *Waiter
	lease      ID // set when granted
}

// C returns the channel that receives the outcome.
func (w *Waiter) C() <-chan Grant { return w.ch }

// group is the waiters of one class acquiring on one node, in arrival order.
// All of them share one chain, so they fit or not together.
type group struct {
	class      string
	node       *node
	tq         *tenantQueue
	cs         *classState
	head, tail *Waiter
	n          int
	heapIdx    int   // position in tq.ready, -1 when parked
	parkedAt   *node // the node whose full limit blocks the group, while parked
	parkIdx    int
}

// tenantQueue holds one tenant's waiters of one class. Groups that may fit are
// in ready, ordered by priority then arrival; a group blocked by a full limit
// inside the tenant is parked on that node until a slot there frees.
type tenantQueue struct {
	tenant  *node
	ready   groupHeap
	waiters int
	deficit int
	ringIdx int
}

// classQueue serves the tenants waiting for one class by weighted deficit
// round robin: the tenant at the cursor gets up to its weight in grants, then
// the cursor moves on; a tenant passed over because nothing of its fitted
// forfeits the rest of its round.
type classQueue struct {
	class   string
	ring    []*tenantQueue
	cursor  int
	tenants map[ID]*tenantQueue
}

func (e *Engine) enqueueLocked(s *session, n *node, class string, maxHold int64, req string, h uint64) *Waiter {
	e.arrivals++
	w := &Waiter{ch: make(chan Grant, 1), session: s, node: n, class: class, maxHold: maxHold, req: req, hash: h, arrival: e.arrivals}
	cq := e.queues[class]
	if cq == nil {
		cq = &classQueue{class: class, tenants: make(map[ID]*tenantQueue)}
		e.queues[class] = cq
	}
	tq := cq.tenants[n.tenant.id]
	if tq == nil {
		tq = &tenantQueue{tenant: n.tenant, ringIdx: -1}
		cq.tenants[n.tenant.id] = tq
	}
	if tq.ringIdx < 0 {
		tq.ringIdx = len(cq.ring)
		cq.ring = append(cq.ring, tq)
	}
	cs := n.class(class)
	g := cs.group
	if g == nil {
		g = &group{class: class, node: n, tq: tq, cs: cs, heapIdx: -1}
		cs.group = g
	}
	if g.n == 0 {
		g.head, g.tail = w, w
		heap.Push(&tq.ready, g)
	} else {
		w.prev, g.tail.next, g.tail = g.tail, w, w
	}
	w.grp = g
	g.n++
	tq.waiters++
	if s.waiters == nil {
		s.waiters = make(map[*Waiter]struct{})
	}
	s.waiters[w] = struct{}{}
	return w
}

// removeWaiterLocked takes w out of its queue in O(log n): its group, and the
// group's tenant and class queues when they become empty.
func (e *Engine) removeWaiterLocked(w *Waiter) {
	g := w.grp
	w.grp = nil
	delete(w.session.waiters, w)
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		g.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		g.tail = w.prev
	}
	w.prev, w.next = nil, nil
	g.n--
	g.tq.waiters--
	if g.n == 0 {
		e.dropGroupLocked(g)
	} else if g.heapIdx >= 0 {
		heap.Fix(&g.tq.ready, g.heapIdx)
	}
	if g.tq.waiters == 0 {
		e.dropTenantLocked(w.class, g.tq)
	}
}

// dropGroupLocked takes an emptied group off its heap or its parking place.
// The group stays on its node for the next waiter.
func (e *Engine) dropGroupLocked(g *group) {
	g.head, g.tail = nil, nil
	if g.heapIdx >= 0 {
		heap.Remove(&g.tq.ready, g.heapIdx)
		return
	}
	e.unparkOneLocked(g)
}

func (e *Engine) dropTenantLocked(class string, tq *tenantQueue) {
	cq := e.queues[class]
	i := tq.ringIdx
	last := len(cq.ring) - 1
	copy(cq.ring[i:], cq.ring[i+1:])
	cq.ring = cq.ring[:last]
	for j := i; j < last; j++ {
		cq.ring[j].ringIdx = j
	}
	tq.ringIdx, tq.deficit = -1, 0
	if i < cq.cursor {
		cq.cursor--
	}
	if cq.cursor >= len(cq.ring) {
		cq.cursor = 0
	}
}

func (e *Engine) failWaiterLocked(w *Waiter, err error) {
	e.removeWaiterLocked(w)
	w.ch <- Grant{Err: err, Seq: e.seq}
}

func (e *Engine) failGroupLocked(g *group, err error) {
	for g.head != nil && g.n > 0 {
		e.failWaiterLocked(g.head, err)
	}
}

// park moves a blocked group off the ready heap onto the node that blocks it.
func (e *Engine) parkLocked(g *group, at *node) {
	heap.Remove(&g.tq.ready, g.heapIdx)
	cs := at.class(g.class)
	g.parkedAt, g.parkIdx = at, len(cs.parked)
	cs.parked = append(cs.parked, g)
}

// unparkOneLocked takes a parked group off its parking node, without putting
// it back on the ready heap.
func (e *Engine) unparkOneLocked(g *group) {
	cs := g.parkedAt.cls[g.class]
	last := len(cs.parked) - 1
	cs.parked[g.parkIdx] = cs.parked[last]
	cs.parked[g.parkIdx].parkIdx = g.parkIdx
	cs.parked[last] = nil
	cs.parked = cs.parked[:last]
	g.parkedAt = nil
}

// unparkLocked puts every group parked on a class state back on its tenant's
// ready heap: a slot there has freed or the limit changed.
func (e *Engine) unparkLocked(cs *classState) {
	for _, g := range cs.parked {
		g.parkedAt = nil
		heap.Push(&g.tq.ready, g)
	}
	clear(cs.parked)
	cs.parked = cs.parked[:0]
}

func (e *Engine) wantDispatch(class string) {
	if cq := e.queues[class]; e.replay || cq == nil || len(cq.ring) == 0 {
		return
	}
	for _, c := range e.dispatch {
		if c == class {
			return
		}
	}
	e.dispatch = append(e.dispatch, class)
}

// firstFitLocked returns the tenant's first group (by priority, then arrival)
// whose whole chain has a free slot. Groups blocked inside the tenant are
// parked on the way, so a blocked head is looked at once per freed slot, not
// once per grant.
func (e *Engine) firstFitLocked(tq *tenantQueue, class string) *group {
	if !fitsLocked(tq.tenant, class) {
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
	return nil
}

// dispatchLocked grants queued acquires of class while any fits.
func (e *Engine) dispatchLocked(class string, now int64) {
	for {
		cq := e.queues[class]
		if cq == nil || len(cq.ring) == 0 || !fitsLocked(e.root, class) {
			return
		}
		if !e.serveOneLocked(cq, class, now) {
			return
		}
	}
}

func (e *Engine) serveOneLocked(cq *classQueue, class string, now int64) bool {
	n := len(cq.ring)
	for i := 0; i < n; i++ {
		idx := (cq.cursor + i) % n
		tq := cq.ring[idx]
		g := e.firstFitLocked(tq, class)
		if g == nil {
			tq.deficit = 0
			continue
		}
		cq.cursor = idx
		if tq.deficit <= 0 {
			tq.deficit = tq.tenant.weightOrOne()
		}
		tq.deficit--
		e.grantWaiterLocked(g.head, now)
		if tq.deficit == 0 && tq.waiters > 0 {
			cq.cursor = (tq.ringIdx + 1) % len(cq.ring)
		}
		return true
	}
	return false
}

func (e *Engine) grantWaiterLocked(w *Waiter, now int64) {
	e.removeWaiterLocked(w)
	ev := e.grantEvent(w.session, w.node, w.class, w.maxHold, w.req, w.hash, now)
	e.emitLocked(ev, now)
	w.lease = ev.Target
	w.ch <- Grant{Lease: e.leases[ev.Target].info(), Seq: ev.Seq}
}

// Abandon withdraws a waiter whose caller stopped waiting. If a grant raced
// in first, the lease is released at once so the slot goes to the next
// waiter; either way nothing is leaked.
func (e *Engine) Abandon(c *Call, w *Waiter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.nowLocked()
	defer e.finishLocked(c, now)
	if w.grp != nil {
		e.removeWaiterLocked(w)
		return
	}
	if l := e.leases[w.lease]; l != nil && w.lease != 0 {
		e.emitLocked(&Event{Kind: KindLeaseReleased, Target: l.id, Node: l.node.id, Name: l.class}, now)
	}
}

// groupHeap orders groups by priority (higher first), then by the arrival of
// their first waiter.
type groupHeap []*group

func (h groupHeap) Len() int { return len(h) }
func (h groupHeap) Less(i, j int) bool {
	if pi, pj := h[i].node.priority, h[j].node.priority; pi != pj {
		return pi > pj
	}
	return h[i].head.arrival < h[j].head.arrival
}
func (h groupHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = i
	h[j].heapIdx = j
}
func (h *groupHeap) Push(x any) {
	g := x.(*group)
	g.heapIdx = len(*h)
	*h = append(*h, g)
}
func (h *groupHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	g.heapIdx = -1
	return g
}
