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
	// Owner is the session whose end ends the node; 0 for a detached node
	// or one made without a session. OwnerEnded: that end is what ended it.
	Owner      ID
	OwnerEnded bool
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
		ID: n.id, Name: n.name, Tenant: n.tenant.id, Depth: int(n.depth), State: n.state,
		Created: n.created, Ended: n.ended, Deadline: n.eff, Weight: n.weight, Priority: n.priority,
		Defaults: cloneDefaults(*n.defs()), Children: n.order.len(), Rates: n.rateInfos(now),
		Owner: n.owner, OwnerEnded: n.ownerEnded,
	}
	if n.parent != nil {
		inf.Parent = n.parent.id
	}
	if n.state == Active {
		inf.State, inf.Ended, _, inf.OwnerEnded = n.doomOf() // OwnerEnded: marked by its owner's end (see orphans.go)
	}
	if n.res.len() > 0 {
		inf.Quotas = make(map[string]QuotaInfo, n.res.len())
		for r, rs := range n.res.all() {
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
	if n == nil || s != nil && !n.within(s.scope) {
		return nil, ErrNotFound // the same for a node outside the scope as for an unused id
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

// activeErr is ErrNodeEnded unless n is active and no node above it has
// ended (a large subtree ends in bounded steps). A node whose deadline passed
// was ended by clockLocked already.
func (n *node) activeErr() error {
	if n.state != Active || n.doomed() {
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
	if top != nil && !top.doomed() {
		e.emitEndLocked(&Event{}, top, DeadlineExceeded, now)
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
		if err := e.checkLocked(p, charge.Resource, charge.Amount, now, scopeOf(s)); err != nil {
			return NodeInfo{}, false, err
		}
		if err := e.usageRoomLocked("charge.amount", charge.Resource, charge.Amount); err != nil {
			return NodeInfo{}, false, err
		}
	}
	if err := e.admitChildLocked(p, &spec, charge); err != nil {
		return NodeInfo{}, false, err
	}
	spec.Quotas, spec.Limits, spec.Rates = copyCaps(spec.Quotas), copyCaps(spec.Limits), copyRates(spec.Rates) // the event shares nothing with the caller
	if charge != nil {
		ch := *charge
		charge = &ch
	}
	ev := &Event{Kind: kind, Target: e.next, Node: p.id, Spec: &spec, Charge: charge}
	if s != nil && !spec.Detached {
		ev.Owner = s.id
	}
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
// A wide subtree ends a step at a time (see ending.go); Cancel answers once
// every step is taken.
func (e *Engine) Cancel(c *Call, id ID) error { return e.endAll(c, id, Cancelled) }

// Close ends a node as Done; the active nodes beneath it are cancelled.
// Like Cancel, it answers once the whole subtree has ended.
func (e *Engine) Close(c *Call, id ID) error { return e.endAll(c, id, Done) }

// endAll ends a node and takes the steps left of ending its subtree,
// releasing the lock between steps.
func (e *Engine) endAll(c *Call, id ID, st State) error {
	if err := e.end(c, id, st); err != nil {
		return err
	}
	e.finishEnds(c)
	return nil
}

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
	ev := &Event{}
	e.stampLocked(ev, s, c, h)
	e.emitEndLocked(ev, n, st, now)
	return nil
}

// Page selects part of a node's children for Describe: those with ids above
// After, in id order, at most Size of them.
type Page struct {
	After ID
	Size  int // 0: DefaultPageSize; at most MaxPageSize

	// Into, when its capacity holds the page, is the memory the page is
	// copied into, so that a caller reading page after page (a screen
	// scrolling, the API answering) reuses one page's memory rather than
	// leaving each to the garbage collector. The children Describe returns
	// then share Into's array: the caller is done with them before it passes
	// the same Into again. Without the room (nil included), Describe makes
	// the page's memory itself.
	Into []NodeInfo
}

// DefaultPageSize and MaxPageSize bound the children one Describe copies.
const (
	DefaultPageSize = 1000
	MaxPageSize     = 5000
)

// describeChunk is how many children Describe copies under one hold of the
// engine lock. A page is copied a chunk at a time, each chunk in O(log
// children + chunk), so a describe delays other calls by no more than one
// chunk, whatever the node's width and the page size.
const describeChunk = 64

// size is how many children the page asks for: Size, or DefaultPageSize for
// 0; none without a page.
func (p *Page) size() (int, error) {
	switch {
	case p == nil:
		return 0, nil
	case p.Size == 0:
		return DefaultPageSize, nil
	case p.Size < 0 || p.Size > MaxPageSize:
		return 0, invalid("page_size", "must be 1 to %d, or 0 for %d, got %d", MaxPageSize, DefaultPageSize, p.Size)
	}
	return p.Size, nil
}

// described is what Describe has copied so far.
type described struct {
	node     NodeInfo
	kids     []NodeInfo
	children int // how many children the node had at the last chunk
	next     ID  // the After of the next chunk; 0 when no child follows
}

// Describe returns a node and, when page is not nil, one page of its
// children (the active ones and those ended within their retention) and the
// After of the next page: 0 when this page is the last. The page is copied
// describeChunk children at a time, each chunk under a hold of the engine
// lock of its own, other calls running between two chunks: each child is
// described as it was when its chunk was copied, and the node as it was at
// the last chunk. Should the node leave the caller's reach between two
// chunks (removed after its retention, or the caller's session ended), the
// page ends short at the last child copied; the next page then answers why.
func (e *Engine) Describe(c *Call, id ID, page *Page) (NodeInfo, []NodeInfo, ID, error) {
	size, err := page.size()
	if err != nil {
		return NodeInfo{}, nil, 0, err
	}
	var d described
	if page != nil { // the memory a page is copied into is made outside the lock
		d.next = page.After
		d.kids = page.Into[:0]
		if cap(d.kids) < min(size, describeChunk) {
			d.kids = make([]NodeInfo, 0, min(size, describeChunk))
		}
	}
	if err := e.describeStep(c, id, size, &d); err != nil {
		return NodeInfo{}, nil, 0, err
	}
	if want := min(size, max(d.children, len(d.kids))); d.next != 0 && len(d.kids) < size && cap(d.kids) < want {
		kids := make([]NodeInfo, len(d.kids), want)
		copy(kids, d.kids)
		d.kids = kids
	}
	for pace := e.pacer(); d.next != 0 && len(d.kids) < size; {
		pace.Between() // a call waiting for the lock takes it before the next chunk does
		if e.describeStep(c, id, size, &d) != nil {
			break
		}
	}
	return d.node, d.kids, d.next, nil
}

// describeStep copies, under one hold of the lock, node id and at
// most describeChunk of its children after d.next, up to size in all.
func (e *Engine) describeStep(c *Call, id ID, size int, d *described) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	_, n, err := e.callerLocked(c, id)
	if err != nil {
		return err
	}
	d.node = n.info(now)
	if size == 0 {
		return nil
	}
	d.children = n.order.len()
	var buf [describeChunk]*node // the children of the chunk, on the stack
	chunk, next := n.order.appendPage(buf[:0], d.next, min(describeChunk, size-len(d.kids)))
	d.next = next
	for _, ch := range chunk {
		d.kids = append(d.kids, ch.info(now))
	}
	return nil
}
