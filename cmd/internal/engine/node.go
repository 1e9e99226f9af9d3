package engine

// node is one vertex of the tree. All fields are guarded by Engine.mu.
type node struct {
	id       ID
	parent   *node
	tenant   *node // the depth-1 ancestor (or itself); the root's tenant is the root
	name     string
	depth    int
	state    State
	created  int64
	ended    int64
	deadline int64 // own deadline, 0 if none
	eff      int64 // effective deadline: min of own and the parent's, 0 if none
	weight   int32
	priority int32

	res      map[string]*resState   // quotas and usage, by resource
	hotName  string                 // the resource last looked up in res
	hot      *resState              // its state: entries of res are never replaced or deleted
	cls      map[string]*classState // limits, leases held and queue links, by class
	defaults Defaults

	children map[ID]*node
	order    kidOrder         // the same children in id order, for paging
	byName   map[string]*node // newest child of each name
	older    *node            // the parent's next older child of the same name (see siblings.go)
	newer    *node            // the parent's next newer child of the same name
	leases   leaseList        // live leases acquired on this node itself

	retention int64 // its spec's retention, nanoseconds

	keyed  Keyed  // the part it plays for ConsumeKeyed
	keyRes string // a key node's resource

	owner      ID   // the session whose end ends this node; 0: none (detached, or made without a session)
	ownerEnded bool // it ended because its owner's session ended

	scoped int  // live sessions scoped to this node
	dirty  bool // changed since the last snapshot capture
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
// last, so that one is kept aside.
func (n *node) findRes(r string) *resState {
	if n.hot != nil && n.hotName == r {
		return n.hot
	}
	rs := n.res[r]
	if rs != nil {
		n.hotName, n.hot = r, rs
	}
	return rs
}

// resource returns n's state of resource r, creating it if need be.
func (n *node) resource(r string) *resState {
	if rs := n.findRes(r); rs != nil {
		return rs
	}
	rs := &resState{}
	if n.res == nil {
		n.res = make(map[string]*resState)
	}
	n.res[r] = rs
	n.hotName, n.hot = r, rs
	return rs
}

func (n *node) class(c string) *classState {
	cs := n.cls[c]
	if cs == nil {
		cs = &classState{node: n}
		if n.cls == nil {
			n.cls = make(map[string]*classState)
		}
		n.cls[c] = cs
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
