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
	at         int // position in its session's waiters while queued
	lease      ID  // set when granted
}

// C returns the channel that receives the outcome.
func (w *Waiter) C() <-chan Grant { return w.ch }

// group is the waiters of one class acquiring on one node, in arrival order.
// All of them share one chain, so they fit or not together. A group is on at
// most one heap at a time: its tenant's ready heap, or the parked heap of the
// node whose full limit blocks it; idx is its position there.
type group struct {
	class      string
	node       *node
	tq         *tenantQueue
	cs         *classState
	head, tail *Waiter
	n          int
	idx        int         // position on its heap, -1 on none
	parkedAt   *node       // while parked: the node whose full limit blocks it
	promisedBy *classState // while ready: the parking place that released it for a slot
}

// tenantQueue holds one tenant's waiters of one class. Groups that may fit are
// on ready, ordered by priority then arrival; a group blocked by a full limit
// inside the tenant is parked on that node. The tenant is in its class's ring
// only while ready is not empty and its own limit is not full, so a round
// visits only tenants that may be served.
type tenantQueue struct {
	cq         *classQueue
	tenant     *node
	ready      groupHeap
	waiters    int
	deficit    int
	blocked    bool // its tenant node's limit is full: out of the ring until a slot there frees
	inRing     bool
	prev, next *tenantQueue
}

// classQueue serves the tenants waiting for one class by weighted deficit
// round robin: the tenant at the cursor gets up to its weight in grants, then
// the cursor moves on; a tenant passed over because nothing of its fitted
// forfeits the rest of its round. The ring is a circular list: joining it
// (at the end of the round) and leaving it are O(1).
type classQueue struct {
	class   string
	cursor  *tenantQueue
	size    int
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
		tq = &tenantQueue{cq: cq, tenant: n.tenant}
		cq.tenants[n.tenant.id] = tq
	}
	cs := n.class(class)
	g := cs.group
	if g == nil {
		g = &group{class: class, node: n, tq: tq, cs: cs, idx: -1}
		cs.group = g
	}
	if g.n == 0 {
		g.head, g.tail = w, w
		e.placeLocked(g)
	} else {
		w.prev, g.tail.next, g.tail = g.tail, w, w
	}
	w.grp = g
	g.n++
	tq.waiters++
	n.use().add(BoundQueued, 1)
	w.at = len(s.waiters)
	s.waiters = append(s.waiters, w)
	return w
}

// removeWaiterLocked takes w out of its queue in O(log n): its group, and the
// group's tenant and class queues when they become empty.
func (e *Engine) removeWaiterLocked(w *Waiter) {
	g := w.grp
	w.grp = nil
	w.session.dropWaiter(w)
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
	w.node.use().add(BoundQueued, -1)
	switch {
	case g.n == 0:
		e.dropGroupLocked(g)
	case g.parkedAt != nil:
		heap.Fix(&g.parkedAt.cls[g.class].parked, g.idx)
	default:
		heap.Fix(&g.tq.ready, g.idx)
	}
	if tq := g.tq; tq.waiters == 0 && tq.blocked {
		tq.tenant.cls[g.class].blockedTenant = nil
		tq.blocked = false
	}
	e.syncRingLocked(g.tq)
}

// dropGroupLocked takes an emptied group off its heap. The group stays on its
// node for the next waiter.
func (e *Engine) dropGroupLocked(g *group) {
	g.head, g.tail = nil, nil
	if g.parkedAt != nil {
		heap.Remove(&g.parkedAt.cls[g.class].parked, g.idx)
		g.parkedAt = nil
		return
	}
	heap.Remove(&g.tq.ready, g.idx)
	e.unpromiseLocked(g, true)
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

func (e *Engine) grantWaiterLocked(w *Waiter, now int64) {
	e.unpromiseLocked(w.grp, false)
	e.removeWaiterLocked(w)
	w.lease = e.grantLocked(w.session, w.node, w.class, w.maxHold, w.req, w.hash, now)
	w.ch <- Grant{Lease: e.leases[w.lease].info(), Seq: e.seq}
}

// Abandon withdraws a waiter whose caller stopped waiting; another caller
// that re-attached to it (a retry with its request id) receives
// ErrWithdrawn. If a grant raced in first, the lease is released at once
// so the slot goes to the next waiter; either way nothing is leaked.
func (e *Engine) Abandon(c *Call, w *Waiter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	if w.grp != nil {
		e.failWaiterLocked(w, ErrWithdrawn)
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
	h[i].idx = i
	h[j].idx = j
}
func (h *groupHeap) Push(x any) {
	g := x.(*group)
	g.idx = len(*h)
	*h = append(*h, g)
}
func (h *groupHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	g.idx = -1
	return g
}

// Settled reports whether abandoning w would change nothing now: it has
// left its queue, and the lease it was granted, if any, has ended. A caller
// that keeps waiters to abandon them later may forget a settled one.
func (e *Engine) Settled(w *Waiter) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return w.grp == nil && (w.lease == 0 || e.leases[w.lease] == nil)
}
