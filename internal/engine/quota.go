package engine

// admits reports whether amount more fits under this resource's caps on one
// node. Every kind of cap a resource can carry is checked here, so the chain
// walk in checkLocked stays the same when a kind is added.
func (rs *resState) admits(amount int64) bool {
	return !rs.capped || amount <= rs.cap-rs.used
}

// checkLocked returns the denial if amount more of r would not fit somewhere
// on n's chain.
func (e *Engine) checkLocked(n *node, r string, amount int64) error {
	for a := n; a != nil; a = a.parent {
		if rs := a.res[r]; rs != nil && !rs.admits(amount) {
			return a.denied(r, rs, amount)
		}
	}
	return nil
}

func (n *node) denied(r string, rs *resState, amount int64) *DeniedError {
	top := rs.top
	if top.Node == 0 {
		top = Consumer{Node: n.id, Name: n.name, Used: rs.used}
	}
	return &DeniedError{
		Node: n.id, NodeName: n.name, Resource: r,
		Used: rs.used, Limit: rs.cap, Requested: amount, Largest: top,
	}
}

// chargeLocked adds amount of r to n and every ancestor, and keeps each
// ancestor's largest consumer: usage only grows, so only the child on the
// charged path can overtake it.
func (e *Engine) chargeLocked(n *node, r string, amount int64) {
	var child *node
	var childUsed int64
	for a := n; a != nil; a = a.parent {
		rs := a.resource(r)
		rs.used += amount
		if a == n {
			rs.own += amount
		}
		if child != nil && (childUsed > rs.top.Used || rs.top.Node == child.id) {
			rs.top = Consumer{Node: child.id, Name: child.name, Used: childUsed}
		}
		child, childUsed = a, rs.used
		e.markNode(a)
	}
}

// Consume charges n units of resource to node id and every ancestor, if every
// cap on the chain has room for them; otherwise it charges nothing and
// returns a *DeniedError. Quota is never refunded.
func (e *Engine) Consume(c *Call, id ID, resource string, n int64) error {
	if n < 1 {
		return invalid("amount", "must be 1 or more, got %d", n)
	}
	if err := validKey("resource", resource); err != nil {
		return err
	}
	if err := validRequest(c); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.nowLocked()
	defer e.finishLocked(c, now)
	s, nd, err := e.callerLocked(c, id, now)
	if err != nil {
		return err
	}
	var h uint64
	if c.Request != "" {
		h = uint64(newHash(KindConsumed).num(int64(id)).str(resource).num(n))
		if _, ok, err := e.recallLocked(s, c, h); err != nil || ok {
			return err
		}
	}
	if err := e.activeLocked(nd, now); err != nil {
		return err
	}
	if err := e.checkLocked(nd, resource, n); err != nil {
		return err
	}
	ev := &Event{Kind: KindConsumed, Node: nd.id, Name: resource, Amount: n}
	e.stampLocked(ev, s, c, h)
	e.emitLocked(ev, now)
	return nil
}

func (e *Engine) applyConsumed(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil || n.state != Active || ev.Amount < 1 || e.replay && validKey("resource", ev.Name) != nil {
		return corrupt("event %d charges unknown or ended node %d", ev.Seq, ev.Node)
	}
	e.chargeLocked(n, ev.Name, ev.Amount)
	return nil
}
