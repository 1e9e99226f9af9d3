package engine

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// The eleven invariants of SPEC.md §5. checkState recomputes I2, I3, I6, I7,
// I8 and I11 from scratch; the auditor checks I1, I4, I5, I9 and I10 on every
// event as it is emitted, because they are statements about transitions.

// checkState must be called without the engine lock held.
func checkState(e *Engine) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, check := range []func(*Engine) error{checkI2Usage, checkI3Held, checkI6Leases, checkI7Ended, checkI8WorkConserving, checkI11Owners, checkIDs, checkStats, checkChildOrder, checkActiveKids, checkBounds, checkScoped} {
		if err := check(e); err != nil {
			return err
		}
	}
	return nil
}

// I11: no node outlives its owner. An active node's owner is a live session
// that lists it, and a session lists only the active nodes it owns. Only a
// node beneath a subtree still ending in steps, one its owner's end marked
// and queued for the steps, or one beneath a marked node (orphans.go),
// waits for the step that ends it; a marked node's owner has ended.
func checkI11Owners(e *Engine) error {
	listed := 0
	for _, s := range slices.Concat(slices.Collect(maps.Values(e.sessions)), e.ownerEnds) {
		for n := range s.owned.all() {
			if e.nodes[n.id] != n || n.state != Active || n.owner != s.id || n.own != s {
				return fmt.Errorf("I11: session %d lists node %d, which is not an active node it owns", s.id, n.id)
			}
		}
		if s.ended == 0 {
			listed += s.owned.len()
		}
	}
	owned := 0
	for _, n := range e.nodes {
		if n.owner == 0 || n.state != Active {
			continue
		}
		if n.marked() && e.sessions[n.owner] != nil {
			return fmt.Errorf("I11: node %d is marked for its owner's end, but session %d is live", n.id, n.owner)
		}
		if s := e.sessions[n.owner]; s != nil {
			owned++
		} else if !n.endedAbove() && !(n.marked() && queuedOrphan(e, n)) && !n.parent.doomed() {
			return fmt.Errorf("I11: active node %d outlived its owner session %d", n.id, n.owner)
		}
	}
	if owned != listed {
		return fmt.Errorf("I11: %d active nodes have owners, but sessions list %d", owned, listed)
	}
	return nil
}

// queuedOrphan reports whether a step of the owners' ends is still to
// reach n: a restore queued it, or its ended owner is queued and the steps
// have not passed it.
func queuedOrphan(e *Engine, n *node) bool {
	if slices.Contains(e.orphaned, n.id) {
		return true
	}
	i := slices.Index(e.ownerEnds, n.own)
	return i > 0 || i == 0 && n.id > n.own.after
}

// I2: usage adds up. A node's usage of a resource is what was charged on it,
// plus its children's usage, plus what removed children had used.
func checkI2Usage(e *Engine) error {
	for _, n := range e.nodes {
		for r, rs := range n.res.all() {
			sum := rs.own + rs.settled
			for ch := range n.order.all() {
				if crs := ch.res.get(r); crs != nil {
					sum += crs.used
				}
			}
			if sum != rs.used {
				return fmt.Errorf("I2: node %d uses %d of %s but its parts add to %d", n.id, rs.used, r, sum)
			}
		}
		for ch := range n.order.all() {
			for r, crs := range ch.res.all() {
				if crs.used > 0 && n.res.get(r) == nil {
					return fmt.Errorf("I2: node %d has no %s usage though child %d used %d", n.id, r, ch.id, crs.used)
				}
			}
		}
	}
	return nil
}

// I3: leases held add up. A node holds, per class, exactly the live leases
// on itself and beneath it.
func checkI3Held(e *Engine) error {
	held := make(map[ID]map[string]int64)
	for _, l := range e.leases {
		for a := l.node; a != nil; a = a.parent {
			if held[a.id] == nil {
				held[a.id] = make(map[string]int64)
			}
			held[a.id][l.class]++
		}
	}
	for _, n := range e.nodes {
		for c, cs := range n.cls {
			if cs.held != held[n.id][c] {
				return fmt.Errorf("I3: node %d counts %d %s leases, %d are live beneath it", n.id, cs.held, c, held[n.id][c])
			}
		}
		for c, h := range held[n.id] {
			if n.cls[c] == nil {
				return fmt.Errorf("I3: node %d does not count its %d %s leases", n.id, h, c)
			}
		}
	}
	return nil
}

// I6: every live lease belongs to a live session and an active node, and is
// indexed where it should be.
func checkI6Leases(e *Engine) error {
	for id, l := range e.leases {
		if e.sessions[l.session.id] != l.session {
			return fmt.Errorf("I6: lease %d belongs to ended session %d", id, l.session.id)
		}
		if e.nodes[l.node.id] != l.node || l.node.state != Active {
			return fmt.Errorf("I6: lease %d is on ended or removed node %d", id, l.node.id)
		}
		if !listed(&l.node.leases, l, byNode) || !listed(&l.session.leases, l, bySession) {
			return fmt.Errorf("I6: lease %d is not indexed on its node and session", id)
		}
		if hasTomb(e, id) {
			return fmt.Errorf("I6: lease %d is both live and ended", id)
		}
	}
	for _, s := range e.sessions {
		for _, l := range s.leases.all(bySession) {
			if e.leases[l.id] != l {
				return fmt.Errorf("I6: session %d lists lease %d that is not live", s.id, l.id)
			}
		}
		if e.nodes[s.scope.id] != s.scope {
			return fmt.Errorf("I6: session %d is scoped to removed node %d", s.id, s.scope.id)
		}
	}
	return nil
}

// I7: ending is final and total. An ended node has only ended nodes beneath
// it (or active ones a later step of ending its wide subtree reaches), holds
// no lease and has no queued acquire; an active node's effective
// deadline is the earlier of its own and its parent's.
func checkI7Ended(e *Engine) error {
	for _, n := range e.nodes {
		if n.parent != nil {
			if e.nodes[n.parent.id] != n.parent || !linked(n.parent, n) {
				return fmt.Errorf("I7: node %d is not linked under its parent", n.id)
			}
			if n.eff != minDeadline(n.deadline, n.parent.eff) {
				return fmt.Errorf("I7: node %d has effective deadline %d, want min(%d, %d)", n.id, n.eff, n.deadline, n.parent.eff)
			}
		}
		if n.state == Active {
			continue
		}
		if n.leases.n > 0 || n.leases.head != nil {
			return fmt.Errorf("I7: ended node %d holds %d leases", n.id, n.leases.n)
		}
		for c, cs := range n.cls {
			if cs.group != nil && cs.group.n > 0 {
				return fmt.Errorf("I7: ended node %d has queued %s acquires", n.id, c)
			}
		}
		for ch := range n.order.all() {
			if ch.state == Active && !stepsReach(e, ch) {
				return fmt.Errorf("I7: ended node %d has active child %d, and no step of ending will reach it", n.id, ch.id)
			}
		}
	}
	return nil
}

// stepsReach reports whether a later step of ending a wide subtree ends ch,
// an active child of an ended node: a cursor on its parent has not passed
// it yet, or a restart left the cursors to be found again.
func stepsReach(e *Engine, ch *node) bool {
	if e.midway[ch.parent.id] != nil {
		return true
	}
	for _, c := range e.ending {
		if c.parent == ch.parent && c.after < ch.id {
			return true
		}
	}
	return false
}

// I8: the queue is work conserving: after every operation no queued acquire
// fits, and every queued acquire is reachable from its class's ring.
func checkI8WorkConserving(e *Engine) error {
	for class, cq := range e.queues {
		tq := cq.cursor
		for i := range cq.size {
			if !tq.inRing || tq.blocked || len(tq.ready) == 0 || cq.tenants[tq.tenant.id] != tq || tq.next.prev != tq {
				return fmt.Errorf("I8: class %s ring position %d is inconsistent", class, i)
			}
			tq = tq.next
		}
		if tq != cq.cursor {
			return fmt.Errorf("I8: class %s ring does not close after %d tenants", class, cq.size)
		}
	}
	for _, s := range e.sessions {
		for i, w := range s.waiters {
			if w.at != i || w.session != s {
				return fmt.Errorf("I8: session %d lists waiter #%d at the wrong place", s.id, i)
			}
			if w.grp == nil || w.node.state != Active {
				return fmt.Errorf("I8: session %d has a waiter outside any queue or on an ended node", s.id)
			}
			if fitsLocked(w.node, w.class) {
				return fmt.Errorf("I8: a %s acquire on node %d waits though it fits", w.class, w.node.id)
			}
		}
	}
	return nil
}

// checkIDs: every id is below the counter, so none can be handed out again.
func checkIDs(e *Engine) error {
	for id := range e.nodes {
		if id >= e.next {
			return fmt.Errorf("node id %d is not below the counter %d", id, e.next)
		}
	}
	for id := range e.leases {
		if id >= e.next {
			return fmt.Errorf("lease id %d is not below the counter %d", id, e.next)
		}
	}
	return nil
}

// auditor checks the transition invariants on each event, as it is emitted
// (the engine lock is held and the event is already applied). It keeps its
// own model of which leases are live, from the events alone.
type auditor struct {
	e       *Engine
	live    map[ID]ID // lease -> session, from events
	leaseOf map[ID]ID // lease -> node
	maxID   ID
	err     error
}

func newAuditor(e *Engine) *auditor {
	return &auditor{e: e, live: make(map[ID]ID), leaseOf: make(map[ID]ID)}
}

func (a *auditor) fail(format string, args ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, args...)
	}
}

func (a *auditor) check(ev *Event) {
	e := a.e
	a.checkScope(ev)
	switch ev.Kind {
	case KindConsumed:
		a.checkQuota(e.nodes[ev.Node], ev.Name, ev)
		a.checkRate(e.nodes[ev.Node], ev.Name, ev)
	case KindNodeCreated:
		if ev.Charge != nil {
			a.checkQuota(e.nodes[ev.Node], ev.Charge.Resource, ev)
		}
		a.newID(ev.Target, ev)
	case KindSessionOpened:
		a.newID(ev.Target, ev)
	case KindLeaseGranted:
		a.newID(ev.Target, ev)
		// I4: no grant takes a node on the chain over its limit.
		for n := e.nodes[ev.Node]; n != nil; n = n.parent {
			if cs := n.cls[ev.Name]; cs.limited && cs.held > cs.limit {
				a.fail("I4: event %d grants %s on node %d over the limit of node %d (%d > %d)", ev.Seq, ev.Name, ev.Node, n.id, cs.held, cs.limit)
			}
		}
		a.live[ev.Target] = ev.Session
		a.leaseOf[ev.Target] = ev.Node
	case KindLeaseReleased, KindLeaseExpired:
		if _, ok := a.live[ev.Target]; !ok {
			a.fail("I5: event %d ends lease %d, which is not live", ev.Seq, ev.Target)
		}
		delete(a.live, ev.Target)
	}
	a.endImplicit(ev)
	// I5: the leases live by the events are exactly the engine's.
	if len(a.live) != len(e.leases) {
		a.fail("I5: after event %d the events leave %d leases live, the engine %d", ev.Seq, len(a.live), len(e.leases))
	}
	for id := range a.live {
		if e.leases[id] == nil {
			a.fail("I5: after event %d lease %d ended without an event that ends it", ev.Seq, id)
		}
	}
}

// endImplicit drops from the model the leases that an ended session or node
// ends with it.
func (a *auditor) endImplicit(ev *Event) {
	switch ev.Kind {
	case KindSessionClosed, KindSessionExpired:
		for id, s := range a.live {
			if s == ev.Target {
				delete(a.live, id)
			}
		}
	case KindNodeEnded:
		top := a.e.nodes[ev.Node]
		for id := range a.live {
			if n := a.e.nodes[a.leaseOf[id]]; n != nil && n.within(top) {
				delete(a.live, id)
			}
		}
	case KindNodeEnding, KindNodesEnded:
		ended := map[ID]bool{ev.Node: ev.Kind == KindNodeEnding}
		for _, id := range ev.IDs {
			ended[id] = true
		}
		for id := range a.live {
			if ended[a.leaseOf[id]] {
				delete(a.live, id)
			}
		}
	}
}

// I1: no consume takes a node on the chain over its cap.
func (a *auditor) checkQuota(n *node, r string, ev *Event) {
	for ; n != nil; n = n.parent {
		if rs := n.res.get(r); rs != nil && rs.capped && rs.used > rs.cap {
			a.fail("I1: event %d takes node %d over its %s cap (%d > %d)", ev.Seq, n.id, r, rs.used, rs.cap)
		}
	}
}

// I10: no consume takes a rate cap below zero, except a booked slot: after
// a charge admitted now, no bucket on the chain is in debt; after a booked
// one, none is in debt at the slot, and the slot is within the ceiling.
func (a *auditor) checkRate(n *node, r string, ev *Event) {
	at := ev.Time
	if ev.Until != 0 {
		at = ev.Until
		if wait := time.Duration(ev.Until - ev.Time); wait > a.e.settings.MaxScheduleWait || wait <= 0 {
			a.fail("I10: event %d books a slot %s away (ceiling %s)", ev.Seq, wait, a.e.settings.MaxScheduleWait)
		}
	}
	for ; n != nil; n = n.parent {
		b := n.res.get(r).rate
		if b == nil {
			continue
		}
		if b.Algorithm == TokenBucket && b.used > b.Limit {
			a.fail("I10: event %d takes node %d's %s token bucket over its limit (%d > %d)", ev.Seq, n.id, r, b.used, b.Limit)
		}
		if b.Algorithm == LeakyBucket && b.tat.after(instant{ns: at + b.tau.ns, rem: b.tau.rem}) {
			a.fail("I10: event %d leaves node %d's %s bucket in debt at %d (full at %d.%d)", ev.Seq, n.id, r, at, b.tat.ns, b.tat.rem)
		}
	}
}

// Ids only grow: every new id is larger than any before.
func (a *auditor) newID(id ID, ev *Event) {
	if id <= a.maxID {
		a.fail("I5: event %d reissues id %d (largest so far %d)", ev.Seq, id, a.maxID)
	}
	a.maxID = id
}

// I9: a session changes only nodes inside its scope.
func (a *auditor) checkScope(ev *Event) {
	if ev.Session == 0 {
		return
	}
	s := a.e.sessions[ev.Session]
	if s == nil {
		return
	}
	if ev.Node != 0 {
		if n := a.e.nodes[ev.Node]; n != nil && !n.within(s.scope) {
			a.fail("I9: event %d by session %d changes node %d outside its scope %d", ev.Seq, s.id, n.id, s.scope.id)
		}
	}
	switch ev.Kind {
	case KindQuotaSet, KindLimitSet, KindNodeEnded, KindNodeEnding, KindRateSet, KindRateReset:
		if ev.Node == s.scope.id && s.scope != a.e.root {
			a.fail("I9: event %d by session %d edits or ends its own scope node %d", ev.Seq, s.id, ev.Node)
		}
	}
}

// listed reports whether l is on ls, walking link w.
func listed(ls *leaseList, l *lease, w int) bool {
	n := 0
	found := false
	for x := ls.head; x != nil; x = x.links[w].next {
		n++
		found = found || x == l
	}
	return found && n == ls.n
}

// checkStats: the counts Stats keeps up to date match a recount.
func checkStats(e *Engine) error {
	ended := 0
	for _, n := range e.nodes {
		if n.state != Active {
			ended++
		}
	}
	if ended != e.endedNodes {
		return fmt.Errorf("stats: %d ended nodes counted, %d in the tree", e.endedNodes, ended)
	}
	rates := 0
	for _, n := range e.nodes {
		for _, rs := range n.res.all() {
			if rs.rate != nil {
				rates++
			}
		}
	}
	if rates != e.rateCaps {
		return fmt.Errorf("stats: %d rate caps counted, %d in the tree", e.rateCaps, rates)
	}
	return nil
}

// checkChildOrder: the children Describe pages through are exactly the
// node's children, in ascending id order, with the holes counted right and
// never more than the children.
// checkActiveKids: every node counts its active children, and the subtrees
// a load left midway are ended nodes with an active child.
func checkActiveKids(e *Engine) error {
	active := make(map[*node]int32)
	for _, n := range e.nodes {
		if n.parent != nil && n.state == Active {
			active[n.parent]++
		}
	}
	for _, n := range e.nodes {
		if n.activeKids != active[n] {
			return fmt.Errorf("node %d counts %d active children, has %d", n.id, n.activeKids, active[n])
		}
	}
	for id, n := range e.midway {
		if e.nodes[id] != n || n.state == Active || n.activeKids == 0 {
			return fmt.Errorf("node %d is noted as a subtree ending midway, but is not an ended node with an active child", id)
		}
	}
	return nil
}

func checkChildOrder(e *Engine) error {
	kids := make(map[*node]int)
	for _, n := range e.nodes {
		if n.parent != nil {
			kids[n.parent]++
		}
	}
	for _, n := range e.nodes {
		o := n.order
		if o == nil {
			if kids[n] != 0 {
				return fmt.Errorf("node %d has %d children and no order of them", n.id, kids[n])
			}
			continue
		}
		live, holes := 0, 0
		for i, ch := range o.kids {
			if i > 0 && o.ids[i-1] >= o.ids[i] {
				return fmt.Errorf("node %d orders child %d after %d", n.id, o.ids[i], o.ids[i-1])
			}
			if ch == nil {
				holes++
				continue
			}
			if ch.id != o.ids[i] || ch.parent != n || e.nodes[ch.id] != ch {
				return fmt.Errorf("node %d pages child %d, which is not its child %d", n.id, ch.id, o.ids[i])
			}
			live++
		}
		if live != kids[n] || live != o.len() || holes != o.holes || len(o.ids) != len(o.kids) || 2*holes > len(o.ids) {
			return fmt.Errorf("node %d pages %d children with %d holes (counted %d), has %d", n.id, live, holes, o.holes, kids[n])
		}
	}
	return nil
}

// linked reports whether n is among p's children.
func linked(p, n *node) bool {
	if p.order == nil {
		return false
	}
	i, found := slices.BinarySearch(p.order.ids, n.id)
	return found && p.order.kids[i] == n
}

// checkScoped: each node counts exactly the live sessions scoped to it or
// beneath it.
func checkScoped(e *Engine) error {
	want := map[*node]int{}
	for _, s := range e.sessions {
		for a := s.scope; a != nil; a = a.parent {
			want[a]++
		}
	}
	for _, n := range e.nodes {
		if int(n.scoped) != want[n] {
			return fmt.Errorf("node %d counts %d sessions scoped inside it; %d are", n.id, n.scoped, want[n])
		}
	}
	return nil
}
