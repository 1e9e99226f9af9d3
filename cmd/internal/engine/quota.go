package engine

// admits reports whether amount more fits under this resource's caps on one
// node at now, without waiting. Every kind of cap a resource can carry is
// checked here, so the chain walk in checkLocked stays the same when a kind
// is added.
func (rs *resState) admits(amount, now int64) bool {
	if rs.capped && amount > rs.cap-rs.used {
		return false
	}
	if rs.rate != nil {
		wait, never, _, _, _ := rs.rate.check(now, amount)
		return wait == 0 && !never
	}
	return true
}

// checkLocked returns the denial if amount more of r would not fit somewhere
// on n's chain at now.
func (e *Engine) checkLocked(n *node, r string, amount, now int64, scope *node) error {
	for a := n; a != nil; a = a.parent {
		if rs := a.findRes(r); rs != nil && !rs.admits(amount, now) {
			return e.denialLocked(n, r, amount, now, scope)
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
// charged path can overtake it. Rate caps count the charge made at time at
// for the slot at slot (at itself unless it was booked for later).
func (e *Engine) chargeLocked(n *node, r string, amount, at, slot int64) {
	var child *node
	var childUsed int64
	for a := n; a != nil; a = a.parent {
		rs := a.findRes(r) // inlined; resource, which makes it if need be, is not
		if rs == nil {
			rs = a.resource(r)
		}
		rs.used += amount
		if rs.rate != nil {
			rs.rate.charge(at, slot, amount)
		}
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
// cap on the chain (quota and rate) has room for them now; otherwise it
// charges nothing and returns a *DeniedError. Quota is never refunded. It is
// ConsumeWith without options, for n of 1 or more.
func (e *Engine) Consume(c *Call, id ID, resource string, n int64) error {
	if n < 1 {
		return invalid("amount", "must be 1 or more, got %d", n)
	}
	_, err := e.ConsumeWith(c, id, resource, n, ConsumeOptions{})
	return err
}

func (e *Engine) applyConsumed(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil || n.state != Active || ev.Amount < 1 || e.replay && validKey("resource", ev.Name) != nil {
		return corrupt("event %d charges unknown or ended node %d", ev.Seq, ev.Node)
	}
	if err := e.usageRoomLocked("amount", ev.Name, ev.Amount); err != nil {
		return corrupt("event %d: %v", ev.Seq, err)
	}
	slot := ev.Time
	if ev.Until != 0 {
		if ev.Until < ev.Time {
			return corrupt("event %d books a slot before its own time", ev.Seq)
		}
		slot = ev.Until
	}
	e.chargeLocked(n, ev.Name, ev.Amount, ev.Time, slot)
	return nil
}
