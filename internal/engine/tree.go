package engine

// NodeInfo describes a node as it is now.
type NodeInfo struct {
	ID       ID
	Parent   ID
	Name     string
	Tenant   ID
	Depth    int
	State    State
	Created  int64 // unix nanoseconds
	Ended    int64 // unix nanoseconds; 0 while active
	Deadline int64 // effective deadline, unix nanoseconds; 0 if none
	Weight   int32
	Priority int32
	Quotas   map[string]QuotaInfo
	Limits   map[string]LimitInfo
	Rates    map[string]RateInfo
	Defaults Defaults
	Children int
}

// QuotaInfo is one resource on one node: its cap, if any, and what the node's
// subtree has used of it.
type QuotaInfo struct {
	Capped  bool
	Cap     int64
	Used    int64
	Settled int64 // part of Used that children since removed had used
	Largest Consumer
}

// LimitInfo is one lease class on one node.
type LimitInfo struct {
	Limited bool
	Limit   int64
	Held    int64
	Waiting int // acquires queued on this node itself
}

func (n *node) info(now int64) NodeInfo {
	inf := NodeInfo{
		ID: n.id, Name: n.name, Tenant: n.tenant.id, Depth: n.depth, State: n.state,
		Created: n.created, Ended: n.ended, Deadline: n.eff, Weight: n.weight, Priority: n.priority,
		Defaults: cloneDefaults(n.defaults), Children: len(n.children), Rates: n.rateInfos(now),
	}
	if n.parent != nil {
		inf.Parent = n.parent.id
	}
	if len(n.res) > 0 {
		inf.Quotas = make(map[string]QuotaInfo, len(n.res))
		for r, rs := range n.res {
			inf.Quotas[r] = QuotaInfo{Capped: rs.capped, Cap: rs.cap, Used: rs.used, Settled: rs.settled, Largest: rs.top}
		}
	}
	if len(n.cls) > 0 {
		inf.Limits = make(map[string]LimitInfo, len(n.cls))
		for c, cs := range n.cls {
			li := LimitInfo{Limited: cs.limited, Limit: cs.limit, Held: cs.held}
			if cs.group != nil {
				li.Waiting = cs.group.n
			}
			inf.Limits[c] = li
		}
	}
	return inf
}

// resolveLocked finds node id and checks that it lies in the caller's scope.
// A session's node 0 is its scope.
func (e *Engine) resolveLocked(s *session, id ID) (*node, error) {
	if id == 0 && s != nil {
		return s.scope, nil
	}
	n := e.nodes[id]
	if n == nil {
		return nil, ErrNotFound
	}
	if s != nil && !n.within(s.scope) {
		return nil, ErrForbidden
	}
	return n, nil
}

// callerLocked resolves the caller's session and the node the call names,
// checked against the session's scope.
func (e *Engine) callerLocked(c *Call, id ID) (*session, *node, error) {
	s, err := e.sessionLocked(c)
	if err != nil {
		return nil, nil, err
	}
	n, err := e.resolveLocked(s, id)
	return s, n, err
}

// activeErr is ErrNodeEnded unless n is active. A node whose deadline
// passed was ended by clockLocked already.
func (n *node) activeErr() error {
	if n.state != Active {
		return ErrNodeEnded
	}
	return nil
}

// expireDeadlineLocked ends the topmost active node on n's chain whose own
// deadline had passed at instant; its subtree, n included, ends with it.
func (e *Engine) expireDeadlineLocked(n *node, instant, now int64) {
	var top *node
	for a := n; a != nil; a = a.parent {
		if a.state == Active && a.deadline != 0 && a.deadline <= instant {
			top = a
		}
	}
	if top != nil {
		e.emitLocked(&Event{Kind: KindNodeEnded, Node: top.id, State: DeadlineExceeded}, now)
	}
}

// Create adds a child under parent. Quotas and limits the spec leaves out
// come from the parent's defaults.
func (e *Engine) Create(c *Call, parent ID, spec Spec) (NodeInfo, error) {
	inf, _, err := e.create(c, parent, spec, nil, false)
	return inf, err
}

// Ensure returns the newest child of parent named spec.Name, even if it has
// ended (until it is removed after the retention), or creates it. When it
// creates the child and charge is set, it charges charge to the parent's
// chain in the same step; if that charge is denied nothing is created.
func (e *Engine) Ensure(c *Call, parent ID, spec Spec, charge *Charge) (NodeInfo, bool, error) {
	return e.create(c, parent, spec, charge, true)
}

func (e *Engine) create(c *Call, parent ID, spec Spec, charge *Charge, ensure bool) (NodeInfo, bool, error) {
	if err := validSpec(&spec); err != nil {
		return NodeInfo{}, false, err
	}
	if spec.Keyed != NotKeyed {
		return NodeInfo{}, false, invalid("keyed", "is set only by a keyed consume; leave it 0")
	}
	if err := validRequest(c); err != nil {
		return NodeInfo{}, false, err
	}
	kind := KindNodeCreated
	h := newHash(kind).num(int64(parent)).spec(&spec)
	if ensure {
		h = h.byte(1)
	}
	if charge != nil {
		if err := validKey("charge.resource", charge.Resource); err != nil {
			return NodeInfo{}, false, err
		}
		if charge.Amount < 1 {
			return NodeInfo{}, false, invalid("charge.amount", "must be 1 or more, got %d", charge.Amount)
		}
		h = h.str(charge.Resource).num(charge.Amount)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, p, err := e.callerLocked(c, parent)
	if err != nil {
		return NodeInfo{}, false, err
	}
	if id, ok, err := e.recallLocked(s, c, uint64(h)); err != nil || ok {
		return e.recalledNode(id, now, err)
	}
	if ensure {
		if n := p.byName[spec.Name]; n != nil && (n.state == Active || now < n.ended+e.keptFor(n)) {
			return n.info(now), false, nil
		}
	}
	if err := p.activeErr(); err != nil {
		return NodeInfo{}, false, err
	}
	if p.depth >= MaxDepth {
		return NodeInfo{}, false, invalid("parent", "the tree is at most %d levels deep", MaxDepth)
	}
	if charge != nil {
		if err := e.checkLocked(p, charge.Resource, charge.Amount, now); err != nil {
			return NodeInfo{}, false, err
		}
		if err := e.usageRoomLocked("charge.amount", charge.Resource, charge.Amount); err != nil {
			return NodeInfo{}, false, err
		}
	}
	spec.Quotas, spec.Limits, spec.Rates = copyCaps(spec.Quotas), copyCaps(spec.Limits), copyRates(spec.Rates) // the event shares nothing with the caller
	if charge != nil {
		ch := *charge
		charge = &ch
	}
	ev := &Event{Kind: kind, Target: e.next, Node: p.id, Spec: &spec, Charge: charge}
	e.stampLocked(ev, s, c, uint64(h))
	e.emitLocked(ev, now)
	return e.nodes[ev.Target].info(now), true, nil
}

// recalledNode answers a repeated create or ensure. Only a creation is
// remembered, so the answer says the node was created, as the first one did.
func (e *Engine) recalledNode(id ID, now int64, err error) (NodeInfo, bool, error) {
	if err != nil {
		return NodeInfo{}, false, err
	}
	if n := e.nodes[id]; n != nil {
		return n.info(now), true, nil
	}
	return NodeInfo{ID: id}, true, nil
}

// stampLocked records who made the change, so its request id is remembered.
func (e *Engine) stampLocked(ev *Event, s *session, c *Call, h uint64) {
	if s == nil {
		return
	}
	ev.Session = s.id
	if c.Request != "" {
		ev.Request = c.Request
		ev.ArgHash = h
	}
}

// Cancel ends a node and its subtree as Cancelled.
func (e *Engine) Cancel(c *Call, id ID) error { return e.end(c, id, Cancelled) }

// Close ends a node as Done; the active nodes beneath it are cancelled.
func (e *Engine) Close(c *Call, id ID) error { return e.end(c, id, Done) }

func (e *Engine) end(c *Call, id ID, st State) error {
	if err := validRequest(c); err != nil {
		return err
	}
	h := uint64(newHash(KindNodeEnded).num(int64(id)).byte(byte(st)))
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, n, err := e.callerLocked(c, id)
	if err != nil {
		return err
	}
	if _, ok, err := e.recallLocked(s, c, h); err != nil || ok {
		return err
	}
	if n == e.root || s != nil && n == s.scope {
		return ErrForbidden
	}
	if err := n.activeErr(); err != nil {
		return err
	}
	ev := &Event{Kind: KindNodeEnded, Node: n.id, State: st}
	e.stampLocked(ev, s, c, h)
	e.emitLocked(ev, now)
	return nil
}

// Describe returns a node and, if asked, its children.
func (e *Engine) Describe(c *Call, id ID, children bool) (NodeInfo, []NodeInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	_, n, err := e.callerLocked(c, id)
	if err != nil {
		return NodeInfo{}, nil, err
	}
	if !children {
		return n.info(now), nil, nil
	}
	kids := make([]NodeInfo, 0, len(n.children))
	for _, ch := range n.children {
		kids = append(kids, ch.info(now))
	}
	sortInfos(kids)
	return n.info(now), kids, nil
}
