package engine

import (
	"cmp"
	"container/heap"
	"maps"
	"slices"
)

// QueueImage is the fair queue's whole state: every queued acquire and
// everything the order of their grants depends on (arrivals, where each
// group waits, each tenant's place and deficit in its class's round). An
// engine restored from a Snapshot and then given the QueueImage of the
// same moment grants the same waiters in the same order as the engine it
// was taken from. Snapshot leaves it out: a single daemon's waiters end
// with their callers' connections.
type QueueImage struct {
	Arrivals uint64          // arrivals counted so far
	Waiters  []QueuedAcquire // in arrival order
	Groups   []QueuedGroup   // by node, then class
	Tenants  []QueuedTenant  // by class, then tenant
}

// QueuedAcquire is one waiting acquire.
type QueuedAcquire struct {
	Arrival uint64
	Session ID
	Node    ID
	Class   string
	MaxHold int64
	Request string
	Hash    uint64 // the request's argument fingerprint
	At      int    // position among its session's waiters
}

// QueuedGroup is where the waiters of one class on one node wait: parked
// on the node whose full limit blocks them (Parked), or ready, perhaps
// holding the promise of a slot at node Promised.
type QueuedGroup struct {
	Node     ID
	Class    string
	Parked   ID // 0: ready
	Promised ID // 0: holds no promise
}

// QueuedTenant is one tenant's queue of one class that has waiters.
type QueuedTenant struct {
	Class   string
	Tenant  ID
	Deficit int
	Blocked bool // its own limit is full
	Ring    int  // place in the class's round from its cursor; -1 out of it
}

// Queue returns the fair queue's image, and the waiters in the order of
// QueueImage.Waiters. It is O(waiters).
func (e *Engine) Queue() (QueueImage, []*Waiter) {
	e.mu.Lock()
	defer e.mu.Unlock()
	qi := QueueImage{Arrivals: e.arrivals}
	n := 0
	for _, class := range slices.Sorted(maps.Keys(e.queues)) {
		cq := e.queues[class]
		for _, id := range slices.Sorted(maps.Keys(cq.tenants)) {
			if tq := cq.tenants[id]; tq.waiters > 0 {
				qi.Tenants = append(qi.Tenants, QueuedTenant{Class: class, Tenant: id, Deficit: tq.deficit, Blocked: tq.blocked, Ring: ringPlace(cq, tq)})
				n += tq.waiters
			}
		}
	}
	ws := make([]*Waiter, 0, n)
	qi.Waiters = make([]QueuedAcquire, 0, n)
	for _, s := range e.sessions {
		ws = append(ws, s.waiters...)
	}
	slices.SortFunc(ws, func(a, b *Waiter) int { return cmp.Compare(a.arrival, b.arrival) })
	for _, w := range ws {
		qi.Waiters = append(qi.Waiters, QueuedAcquire{Arrival: w.arrival, Session: w.session.id, Node: w.node.id, Class: w.class, MaxHold: w.maxHold, Request: w.req, Hash: w.hash, At: w.at})
		if g := w.grp; g.head == w {
			qi.Groups = append(qi.Groups, groupImage(g))
		}
	}
	slices.SortFunc(qi.Groups, func(a, b QueuedGroup) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Class, b.Class))
	})
	return qi, ws
}

func ringPlace(cq *classQueue, tq *tenantQueue) int {
	if !tq.inRing {
		return -1
	}
	i := 0
	for at := cq.cursor; at != tq; at = at.next {
		i++
	}
	return i
}

func groupImage(g *group) QueuedGroup {
	qg := QueuedGroup{Node: g.node.id, Class: g.class}
	if g.parkedAt != nil {
		qg.Parked = g.parkedAt.id
	}
	if g.promisedBy != nil {
		qg.Promised = g.promisedBy.node.id
	}
	return qg
}

// RestoreQueue queues the waiters of qi in an engine that has none, as
// they were where qi was taken, and returns them in the order of
// qi.Waiters. The engine must hold the nodes and sessions of the moment qi
// was taken (Restore from its Snapshot). An image that does not fit the
// tree is refused with an ErrCorrupt error; the engine is then unusable.
func (e *Engine) RestoreQueue(qi QueueImage) ([]*Waiter, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queues) > 0 {
		return nil, corrupt("the engine has a queue already")
	}
	ws, err := e.restoreWaitersLocked(qi)
	if err != nil {
		return nil, err
	}
	if err := e.restoreGroupsLocked(qi.Groups, ws); err != nil {
		return nil, err
	}
	if err := e.restoreTenantsLocked(qi.Tenants); err != nil {
		return nil, err
	}
	e.arrivals = qi.Arrivals
	return ws, nil
}

func (e *Engine) restoreWaitersLocked(qi QueueImage) ([]*Waiter, error) {
	ws := make([]*Waiter, 0, len(qi.Waiters))
	for i := range qi.Waiters {
		r := &qi.Waiters[i]
		s, n := e.sessions[r.Session], e.nodes[r.Node]
		if s == nil || n == nil || validKey("class", r.Class) != nil || r.Arrival > qi.Arrivals || i > 0 && r.Arrival <= qi.Waiters[i-1].Arrival {
			return nil, corrupt("queued acquire %d names a missing session or node, a bad class or an arrival out of order", r.Arrival)
		}
		w := e.enqueueLocked(s, n, r.Class, r.MaxHold, r.Request, r.Hash)
		w.arrival, w.at = r.Arrival, r.At
		ws = append(ws, w)
	}
	for _, s := range e.sessions {
		slices.SortFunc(s.waiters, func(a, b *Waiter) int { return cmp.Compare(a.at, b.at) })
		for i, w := range s.waiters {
			if w.at != i {
				return nil, corrupt("session %d has its queued acquires at places that are not 0 to %d", s.id, len(s.waiters)-1)
			}
		}
	}
	return ws, nil
}

// restoreGroupsLocked moves each group from where enqueueLocked placed it
// to where the image says it waits.
func (e *Engine) restoreGroupsLocked(gs []QueuedGroup, ws []*Waiter) error {
	seen := make(map[*group]bool, len(gs))
	for _, r := range gs {
		n := e.nodes[r.Node]
		if n == nil || n.cls[r.Class] == nil || n.cls[r.Class].group == nil || n.cls[r.Class].group.n == 0 || seen[n.cls[r.Class].group] {
			return corrupt("queued group on node %d, class %q, has no waiters or is repeated", r.Node, r.Class)
		}
		g := n.cls[r.Class].group
		seen[g] = true
		e.takeOffLocked(g)
		if r.Parked != 0 {
			at := e.nodes[r.Parked]
			if at == nil {
				return corrupt("queued group on node %d is parked on missing node %d", r.Node, r.Parked)
			}
			e.parkAtLocked(g, at)
		} else {
			heap.Push(&g.tq.ready, g)
		}
		if r.Promised != 0 {
			p := e.nodes[r.Promised]
			if p == nil || r.Parked != 0 {
				return corrupt("queued group on node %d holds a promise of missing node %d, or is parked", r.Node, r.Promised)
			}
			g.promisedBy = p.class(r.Class)
			g.promisedBy.promised++
		}
	}
	for _, w := range ws {
		if !seen[w.grp] {
			return corrupt("the queue image does not place the group of queued acquire %d", w.arrival)
		}
	}
	return nil
}

// takeOffLocked takes a group off the heap it is on, without a promise.
func (e *Engine) takeOffLocked(g *group) {
	if g.parkedAt != nil {
		heap.Remove(&g.parkedAt.cls[g.class].parked, g.idx)
		g.parkedAt = nil
		return
	}
	heap.Remove(&g.tq.ready, g.idx)
}

// restoreTenantsLocked sets each tenant queue's round state, and rebuilds
// each class's round in the order of the image.
func (e *Engine) restoreTenantsLocked(ts []QueuedTenant) error {
	for _, cq := range e.queues {
		for _, tq := range cq.tenants {
			if tq.inRing {
				e.ringLeaveLocked(tq)
			}
		}
	}
	ts = slices.Clone(ts)
	slices.SortStableFunc(ts, func(a, b QueuedTenant) int { return cmp.Or(cmp.Compare(a.Class, b.Class), cmp.Compare(a.Ring, b.Ring)) })
	for _, r := range ts {
		cq := e.queues[r.Class]
		if cq == nil || cq.tenants[r.Tenant] == nil || r.Deficit < 0 {
			return corrupt("queued tenant %d of class %q has no waiters or a negative deficit", r.Tenant, r.Class)
		}
		tq := cq.tenants[r.Tenant]
		if r.Ring >= 0 {
			if r.Ring != cq.size || r.Blocked || len(tq.ready) == 0 {
				return corrupt("queued tenant %d of class %q has a bad place %d in its round", r.Tenant, r.Class, r.Ring)
			}
			e.ringJoinLocked(tq)
		}
		tq.deficit = r.Deficit
		if r.Blocked {
			tq.blocked = true
			tq.tenant.class(r.Class).blockedTenant = tq
		}
	}
	for _, cq := range e.queues {
		for _, tq := range cq.tenants {
			if tq.inRing != (len(tq.ready) > 0 && !tq.blocked) {
				return corrupt("queued tenant %d of class %q is out of its round with acquires that may be served", tq.tenant.id, cq.class)
			}
		}
	}
	return nil
}

// WaiterLease returns the lease w was granted, 0 if none yet.
func (e *Engine) WaiterLease(w *Waiter) ID {
	e.mu.Lock()
	defer e.mu.Unlock()
	return w.lease
}

// GrantedWaiter returns a waiter that left its queue with lease, as one
// restored beside a QueueImage: abandoning it releases the lease if it is
// still held, as abandoning the waiter it stands for would.
func GrantedWaiter(lease ID) *Waiter {
	return &Waiter{ch: make(chan Grant, 1), lease: lease}
}
