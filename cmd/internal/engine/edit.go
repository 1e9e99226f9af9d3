package engine

// SetQuota sets the cap of resource on node id; nil removes it. A cap may be
// set below what is used: nothing is taken back, and every further consume
// through the node is denied. A session may edit any node in its scope except
// the scope node itself; a session scoped to the root may edit the root.
func (e *Engine) SetQuota(c *Call, id ID, resource string, value *int64) error {
	return e.setCap(c, KindQuotaSet, id, resource, value)
}

// SetLimit sets the concurrency limit of class on node id; nil removes it.
// Lowering a limit below what is held revokes nothing: grants through the
// node stop until enough leases come back. Same scope rule as SetQuota.
func (e *Engine) SetLimit(c *Call, id ID, class string, value *int64) error {
	return e.setCap(c, KindLimitSet, id, class, value)
}

// AdjustLimit is SetLimit for the daemon's adaptive controller, as a
// compare-and-set: it moves the limit of class on node id from from (nil:
// no limit) to to, and fails with ErrLimitChanged, changing nothing, if the
// limit is no longer from, so a controller never overwrites an operator's
// edit made after it last read the limit. The event records the inputs that
// made it move. Only the daemon (a call without a session) may use it.
func (e *Engine) AdjustLimit(c *Call, id ID, class string, from *int64, to int64, why Adapt) error {
	if c.Session != 0 {
		return ErrForbidden
	}
	return e.setCapWith(c, KindLimitSet, id, class, &to, &adjustment{from: from, why: why})
}

// adjustment is what an adaptive change adds to a plain cap edit.
type adjustment struct {
	from *int64
	why  Adapt
}

func (e *Engine) setCap(c *Call, kind Kind, id ID, key string, value *int64) error {
	return e.setCapWith(c, kind, id, key, value, nil)
}

func (e *Engine) setCapWith(c *Call, kind Kind, id ID, key string, value *int64, adj *adjustment) error {
	field := "resource"
	if kind == KindLimitSet {
		field = "class"
	}
	if err := validKey(field, key); err != nil {
		return err
	}
	if value != nil && *value < 0 {
		return invalid("value", "must be 0 or more, or absent to remove the cap; got %d", *value)
	}
	if err := validRequest(c); err != nil {
		return err
	}
	h := uint64(newHash(kind).num(int64(id)).str(key).opt(value))
	return e.edit(c, id, h, false, func(n *node) (*Event, error) {
		if err := e.admitNameLocked(n, key, kind == KindQuotaSet); err != nil {
			return nil, err
		}
		ev := &Event{Kind: kind, Node: n.id, Name: key}
		if adj != nil {
			if !n.limitIs(key, adj.from) {
				return nil, ErrLimitChanged
			}
			ev.Adapt = &adj.why
		}
		if value != nil {
			v := *value
			ev.Value = &v
		}
		return ev, nil
	})
}

// limitIs reports whether the node's limit on class is want (nil: none).
func (n *node) limitIs(class string, want *int64) bool {
	cs := n.cls[class]
	if cs == nil || !cs.limited {
		return want == nil
	}
	return want != nil && *want == cs.limit
}

// SetDefaults replaces what nodes created under id start with from now on.
// Nodes that exist keep their caps. A session may set the defaults of its own
// scope and of anything in it.
func (e *Engine) SetDefaults(c *Call, id ID, d Defaults) error {
	if err := validDefaults(&d); err != nil {
		return err
	}
	if err := validRequest(c); err != nil {
		return err
	}
	h := uint64(newHash(KindDefaultsSet).num(int64(id)).defaults(&d))
	return e.edit(c, id, h, true, func(n *node) (*Event, error) {
		d = cloneDefaults(d)
		return &Event{Kind: KindDefaultsSet, Node: n.id, Defaults: &d}, nil
	})
}

// edit makes one edit of node id, whose arguments hash to h: it checks the
// caller may edit the node (its own scope node only with ownScope), asks
// change for the event that records the edit, and emits it stamped with the
// caller's request. change may refuse with an error, and then nothing
// changes. A request id seen before answers as the first call did.
func (e *Engine) edit(c *Call, id ID, h uint64, ownScope bool, change func(n *node) (*Event, error)) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	n, s, err := e.editTargetLocked(c, id, h, now, ownScope)
	if err != nil || n == nil {
		return err
	}
	ev, err := change(n)
	if err != nil {
		return err
	}
	e.stampLocked(ev, s, c, h)
	e.emitLocked(ev, now)
	return nil
}

// editTargetLocked resolves the node an edit names and checks the caller may
// edit it. A nil node with a nil error means the request id was seen before
// and the edit is already done.
func (e *Engine) editTargetLocked(c *Call, id ID, h uint64, now int64, ownScope bool) (*node, *session, error) {
	s, n, err := e.callerLocked(c, id)
	if err != nil {
		return nil, nil, err
	}
	if _, ok, err := e.recallLocked(s, c, h); err != nil || ok {
		return nil, nil, err
	}
	if s != nil && n == s.scope && n != e.root && !ownScope {
		return nil, nil, ErrForbidden
	}
	if err := n.activeErr(); err != nil {
		return nil, nil, err
	}
	return n, s, nil
}

func (e *Engine) applyCapSet(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil || validKey("name", ev.Name) != nil || ev.Value != nil && *ev.Value < 0 {
		return corrupt("event %d sets a cap on unknown node %d", ev.Seq, ev.Node)
	}
	e.markNode(n)
	if ev.Kind == KindQuotaSet {
		rs := n.resource(ev.Name)
		rs.capped, rs.cap = ev.Value != nil, 0
		if ev.Value != nil {
			rs.cap = *ev.Value
		}
		return nil
	}
	cs := n.class(ev.Name)
	cs.limited, cs.limit = ev.Value != nil, 0
	if ev.Value != nil {
		cs.limit = *ev.Value
	}
	e.slotFreedLocked(cs)
	e.wantDispatch(ev.Name)
	return nil
}
