package engine

// node is one vertex of the tree. All fields are guarded by Engine.mu. A
// daemon holds a great many of them, most idle leaves, so what only some
// nodes need is nil until they need it, and the small fields sit together.
type node struct {
	id       ID
	parent   *node
	tenant   *node // the depth-1 ancestor (or itself); the root's tenant is the root
	name     string
	created  int64
	ended    int64
	deadline int64 // own deadline, 0 if none
	eff      int64 // effective deadline: min of own and the parent's, 0 if none

	res      resSet                 // quotas and usage, by resource
	hot      *resEntry              // the entry of res last looked up (see findRes)
	cls      map[string]*classState // limits, leases held and queue links, by class
	defaults *Defaults              // nil: none; its maps may be shared with other nodes, so it is replaced, never written

	order  *kidOrder        // its children in id order; nil until it has had one
	byName map[string]*node // newest child of each name
	older  *node            // the parent's next older child of the same name (see siblings.go)
	newer  *node            // the parent's next newer child of the same name
	leases leaseList        // live leases acquired on this node itself

	retention int64    // its spec's retention, nanoseconds
	keyRes    string   // a key node's resource
	owner     ID       // the session whose end ends this node; 0: none (detached, or made without a session)
	own       *session // that session while this node is active and on its list; nil after a restore that lost it
	doomAt    uint64   // once ended, the place in the order of dooms of what decided its end (see orphans.go)

	usage *tenantUsage // a tenant node's counts against its bounds (see tenantuse.go); nil on others

	depth      int32
	weight     int32
	priority   int32
	scoped     int32 // live sessions scoped to this node or beneath it (countScoped)
	activeKids int32 // its active children (adopt, disown, endNodeLocked)
	state      State
	keyed      Keyed // the part it plays for ConsumeKeyed
	ownerEnded bool  // it ended because its owner's session ended
	dirty      bool  // changed since the last snapshot capture
}

// resState is one resource on one node.
type resState struct {
	capped  bool
	cap     int64
	used    int64 // everything charged through this node
	own     int64 // charged on this node itself
	settled int64 // used by children since removed
	top     Consumer
	rate    *bucket // the rate cap, nil if none
}

// classState is one lease class on one node.
type classState struct {
	node    *node
	up      *classState // the parent's state of the same class, once linked (see classChain)
	limited bool
	limit   int64
	held    int64 // live leases on this node and beneath it

	group         *group       // waiters acquiring on this node itself
	parked        groupHeap    // groups blocked by this node's full limit
	promised      int          // parked groups released for a slot here, not yet granted
	blockedTenant *tenantQueue // this tenant node's queue, while this limit blocks it
}

// findRes returns n's state of resource r, nil if it has none. A chain walk
// looks up the same resource on every node, usually the one it looked up
// last, so that one's entry is kept aside. It is small enough to inline,
// which the chain walks of every consume count on; the search is seekRes,
// kept out of line for that.
func (n *node) findRes(r string) *resState {
	if h := n.hot; h != nil && h.name == r {
		return h.rs
	}
	return n.seekRes(r)
}

// seekRes searches n's resources for r and keeps its entry aside.
//
//go:noinline
func (n *node) seekRes(r string) *resState {
	i := n.res.find(r)
	if i < 0 {
		return nil
	}
	n.hot = &n.res.list[i]
	return n.hot.rs
}

// resource returns n's state of resource r, creating it if need be.
func (n *node) resource(r string) *resState {
	if rs := n.findRes(r); rs != nil {
		return rs
	}
	rs := &resState{}
	n.res.add(r, rs)
	n.use().carry(r, true, 1)
	n.hot = &n.res.list[n.res.len()-1]
	return rs
}

// noDefaults is what defs returns for a node without defaults. It is never
// written.
var noDefaults Defaults

// defs returns n's defaults, for reading only.
func (n *node) defs() *Defaults {
	if n.defaults == nil {
		return &noDefaults
	}
	return n.defaults
}

// keptDefaults returns a copy of d for a node to keep, nil if d sets nothing.
func keptDefaults(d Defaults) *Defaults {
	if emptyDefaults(&d) {
		return nil
	}
	out := cloneDefaults(d)
	return &out
}

func (n *node) class(c string) *classState {
	cs := n.cls[c]
	if cs == nil {
		cs = &classState{node: n}
		if n.cls == nil {
			n.cls = make(map[string]*classState)
		}
		n.cls[c] = cs
		n.use().carry(c, false, 1)
	}
	return cs
}

// within reports whether n is scope or lies beneath it.
func (n *node) within(scope *node) bool {
	for a := n; a != nil && a.depth >= scope.depth; a = a.parent {
		if a == scope {
			return true
		}
	}
	return false
}

// countScoped adds d to the sessions scoped inside each node from n up to
// the root, in O(depth): a node with a session scoped inside is kept in the
// tree (removal.go) without a look at its subtree.
func (n *node) countScoped(d int32) {
	for a := n; a != nil; a = a.parent {
		a.scoped += d
	}
}

// blockedBelow returns the first node from n up to (not including) stop whose
// limit for class c is full, or nil.
func (n *node) blockedBelow(stop *node, c string) *node {
	for a := n; a != nil && a != stop; a = a.parent {
		if cs := a.cls[c]; cs != nil && cs.limited && cs.held >= cs.limit {
			return a
		}
	}
	return nil
}

func (n *node) weightOrOne() int {
	if n.weight < 1 {
		return 1
	}
	return int(n.weight)
}

func copyCaps(m map[string]int64) map[string]int64 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
