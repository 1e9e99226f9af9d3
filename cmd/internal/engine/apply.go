package engine

// applyLocked makes the change an event records. Live operations and replay
// both come through here. It returns an error only for an event that does not
// fit the tree, which in replay means the record is corrupt.
func (e *Engine) applyLocked(ev *Event) error {
	if ev.Seq != e.seq+1 {
		return corrupt("event %d follows event %d: the record has a gap or is out of order", ev.Seq, e.seq)
	}
	if ev.Time < e.last {
		return corrupt("event %d goes back in time", ev.Seq)
	}
	var err error
	switch ev.Kind {
	case KindSettings:
		err = e.applySettings(ev)
	case KindSessionOpened:
		err = e.applySessionOpened(ev)
	case KindSessionClosed, KindSessionExpired:
		err = e.applySessionEnded(ev)
	case KindNodeCreated:
		err = e.applyNodeCreated(ev)
	case KindNodeEnded, KindNodeEnding:
		err = e.applyNodeEnded(ev)
	case KindNodesRemoved:
		err = e.applyNodesRemoved(ev)
	case KindConsumed:
		err = e.applyConsumed(ev)
	case KindLeaseGranted:
		err = e.applyLeaseGranted(ev)
	case KindLeaseReleased, KindLeaseExpired:
		err = e.applyLeaseEnded(ev)
	case KindQuotaSet, KindLimitSet:
		err = e.applyCapSet(ev)
	case KindDefaultsSet:
		err = e.applyDefaultsSet(ev)
	case KindRateSet:
		err = e.applyRateSet(ev)
	case KindRateReset:
		err = e.applyRateReset(ev)
	case KindRateDrained:
		err = e.applyRateDrained(ev)
	case KindKeysForgotten:
		err = e.applyKeysForgotten(ev)
	case KindNodesEnded:
		err = e.applyNodesEnded(ev)
	default:
		err = corrupt("event %d has unknown kind %d", ev.Seq, ev.Kind)
	}
	if err != nil {
		return err
	}
	e.seq = ev.Seq
	e.last = ev.Time
	e.rememberLocked(ev)
	return nil
}

func (e *Engine) applySettings(ev *Event) error {
	if ev.Settings == nil || validSettings(ev.Settings) != nil {
		return corrupt("event %d: bad settings", ev.Seq)
	}
	e.settings = *ev.Settings
	return nil
}

func (e *Engine) applyNodeCreated(ev *Event) error {
	p := e.nodes[ev.Node]
	if p == nil || p.state != Active || ev.Spec == nil || ev.Target < e.next || p.depth >= MaxDepth {
		return corrupt("event %d creates node %d under unknown, ended or too deep node %d", ev.Seq, ev.Target, ev.Node)
	}
	if err := validSpec(ev.Spec); err != nil {
		return corrupt("event %d: %v", ev.Seq, err)
	}
	sp := ev.Spec
	n := &node{
		id: ev.Target, parent: p, tenant: p.tenant, name: sp.Name, depth: p.depth + 1,
		created: ev.Time, deadline: sp.Deadline, eff: minDeadline(sp.Deadline, p.eff),
		weight: sp.Weight, priority: sp.Priority, retention: int64(sp.Retention),
	}
	if p == e.root {
		n.tenant, n.usage = n, newUsage(e.bounds.declared)
	} else {
		n.use().add(BoundNodes, 1)
	}
	d := p.defs()
	setCaps(n, d.Quotas, d.Limits)
	setCaps(n, sp.Quotas, sp.Limits)
	if err := e.setRatesLocked(n, d.Rates); err != nil {
		return corrupt("event %d: %v", ev.Seq, err)
	}
	if err := e.setRatesLocked(n, sp.Rates); err != nil {
		return corrupt("event %d: %v", ev.Seq, err)
	}
	if ch := d.Children; ch != nil {
		n.defaults = &Defaults{Caps: *ch} // shares p's maps: neither node writes them
	}
	p.adopt(n)
	e.nodes[n.id] = n
	e.next = n.id + 1
	if n.deadline != 0 && n.eff == n.deadline {
		e.timers.pushDeadline(n.deadline, n.id)
	}
	e.markKeyed(n, sp)
	if ev.Owner != 0 {
		s := e.sessions[ev.Owner]
		if s == nil {
			return corrupt("event %d: node %d is owned by unknown session %d", ev.Seq, n.id, ev.Owner)
		}
		ownLocked(n, s)
	}
	e.markNode(n)
	e.markNode(p)
	if ch := ev.Charge; ch != nil {
		if ch.Amount < 1 || validKey("charge", ch.Resource) != nil || e.usageRoomLocked("charge.amount", ch.Resource, ch.Amount) != nil {
			return corrupt("event %d: bad charge", ev.Seq)
		}
		e.chargeLocked(p, ch.Resource, ch.Amount, ev.Time, ev.Time)
	}
	return nil
}

func setCaps(n *node, quotas, limits map[string]int64) {
	for r, v := range quotas {
		rs := n.resource(r)
		rs.capped, rs.cap = true, v
	}
	for c, v := range limits {
		cs := n.class(c)
		cs.limited, cs.limit = true, v
	}
}

func minDeadline(a, b int64) int64 {
	if a == 0 || b != 0 && b < a {
		return b
	}
	return a
}

// applyNodeEnded ends an active node that is not the root and has no ended
// ancestor: with its subtree (KindNodeEnded), or on its own, its subtree
// left to later steps (KindNodeEnding).
func (e *Engine) applyNodeEnded(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil || n == e.root || n.state != Active || n.endedAbove() || ev.State == Active || ev.State > DeadlineExceeded {
		return corrupt("event %d ends unknown, root or ended node %d", ev.Seq, ev.Node)
	}
	if err := markOwnerEnd(ev, n); err != nil {
		return err
	}
	if ev.Kind == KindNodeEnding {
		e.endNodeLocked(n, ev.State, ev.Time)
		e.followLocked(n)
	} else {
		e.endTreeLocked(n, ev.State, ev.Time)
	}
	e.timers.pushRemoval(n.ended, n.id)
	if e.replay {
		e.trimOrphansLocked()
	}
	return nil
}

// endTreeLocked ends n with state st and every active node beneath it: their
// leases are revoked and their queued acquires fail. Below n, a node is
// cancelled, or past its deadline if n is.
func (e *Engine) endTreeLocked(n *node, st State, now int64) {
	e.endNodeLocked(n, st, now)
	below := belowState(n.state)
	for ch := range n.order.all() {
		if ch.state == Active {
			e.endTreeLocked(ch, below, n.ended)
		}
	}
}

// belowState is how the nodes beneath a node that ended as st end.
func belowState(st State) State {
	if st == DeadlineExceeded {
		return DeadlineExceeded
	}
	return Cancelled
}

// endNodeLocked ends n alone with state st at now: its leases are revoked
// and its queued acquires fail.
func (e *Engine) endNodeLocked(n *node, st State, now int64) {
	doom, at, place, own := n.doomOf()
	switch {
	case own: // its owner's end came first (see orphans.go)
		st, now, n.ownerEnded = Cancelled, at, true
	case doom == Active:
		place = e.doomNext()
	}
	n.state, n.ended, n.doomAt = st, now, place
	if p := n.parent; p != nil { // never nil: the root does not end
		if p.activeKids--; p.activeKids == 0 {
			delete(e.midway, p.id)
		}
	}
	e.endedNodes++
	e.unownLocked(n)
	e.markNode(n)
	for _, l := range n.leases.all(byNode) {
		e.endLeaseLocked(l, OutcomeRevoked, now)
	}
	for _, cs := range n.cls {
		if cs.group != nil && cs.group.n > 0 {
			e.failGroupLocked(cs.group, ErrNodeEnded)
		}
	}
}

func (e *Engine) applyNodesRemoved(ev *Event) error {
	for _, id := range ev.IDs {
		n := e.nodes[id]
		if n == nil || n == e.root || n.state == Active {
			return corrupt("event %d removes unknown, root or active node %d", ev.Seq, id)
		}
		p := n.parent
		for r, rs := range n.res.all() {
			prs := p.resource(r)
			prs.settled += rs.used
		}
		p.disown(n)
		e.markNode(p)
		e.forgetTreeLocked(n)
	}
	return nil
}

// forgetTreeLocked forgets n and what is left of its subtree. A removal in
// steps lists children before their parent, so n is then childless; a
// record written before removal went in steps lists only the topmost node.
func (e *Engine) forgetTreeLocked(n *node) {
	delete(e.nodes, n.id)
	nodeGone(n)
	e.endedNodes--
	for _, rs := range n.res.all() {
		if rs.rate != nil {
			e.rateCaps--
		}
	}
	e.dirty.nodes = append(e.dirty.nodes, n.id)
	for ch := range n.order.all() {
		e.forgetTreeLocked(ch)
	}
}

func (e *Engine) applyDefaultsSet(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil || ev.Defaults == nil {
		return corrupt("event %d sets defaults on unknown node %d", ev.Seq, ev.Node)
	}
	n.defaults = keptDefaults(*ev.Defaults)
	e.markNode(n)
	return nil
}
