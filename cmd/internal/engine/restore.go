package engine

import (
	"cmp"
	"maps"
	"slices"
)

// Restore rebuilds an engine from a snapshot. It checks that the snapshot
// forms a valid tree (every parent, scope, holder and count consistent) and
// returns an ErrCorrupt error otherwise. Sessions start with one TTL from the
// snapshot's time; the daemon calls Revive once replay is done.
func Restore(opts Options, st *Snapshot) (*Engine, error) {
	e := newEngine(opts)
	e.seq, e.last, e.next, e.settings = st.Seq, st.Time, st.Next, st.Settings
	e.captured = st.Next // an image started from st holds every id below it
	if validSettings(&st.Settings) != nil {
		return nil, corrupt("snapshot has negative settings")
	}
	if err := e.restoreNodes(st.Nodes); err != nil {
		return nil, err
	}
	if err := e.restoreSessions(st.Sessions); err != nil {
		return nil, err
	}
	if err := e.restoreOwners(); err != nil {
		return nil, err
	}
	if err := e.restoreLeases(st.Leases); err != nil {
		return nil, err
	}
	for i := range st.Tombs {
		r := &st.Tombs[i]
		if r.ID == 0 || r.ID >= e.next || hasTomb(e, r.ID) || e.leases[r.ID] != nil {
			return nil, corrupt("snapshot has a bad or repeated tombstone %d", r.ID)
		}
		e.tombs[r.ID] = tombstone{id: r.ID, node: r.Node, session: r.Session, class: r.Class, outcome: r.Outcome, ended: r.Ended, until: r.Until}
		e.timers.pushTomb(r.Until, r.ID)
	}
	if err := e.checkCounts(); err != nil {
		return nil, err
	}
	for _, l := range e.leases {
		l.cs = l.node.classChain(l.class)
	}
	e.recountLocked()
	return e, nil
}

func (e *Engine) restoreNodes(recs []NodeRec) error {
	if len(recs) == 0 || recs[0].ID != RootID || recs[0].Parent != 0 || recs[0].State != Active {
		return corrupt("snapshot does not start with an active root")
	}
	rest := make(usage)
	for i := range recs {
		r := &recs[i]
		if r.ID == 0 || r.ID >= e.next || e.nodes[r.ID] != nil || i > 0 && r.ID <= recs[i-1].ID {
			return corrupt("snapshot has a bad, repeated or out-of-order node id %d", r.ID)
		}
		if r.State > DeadlineExceeded || r.Deadline < 0 || validName(r.Name) != nil && r.ID != RootID {
			return corrupt("snapshot node %d has a bad state, deadline or name", r.ID)
		}
		n := &node{
			id: r.ID, name: r.Name, state: r.State, created: r.Created, ended: r.Ended,
			deadline: r.Deadline, eff: r.Deadline, weight: r.Weight, priority: r.Priority,
			defaults: keptDefaults(r.Defaults), retention: r.Retention, keyed: r.Keyed, keyRes: r.KeyRes,
			owner: r.Owner, ownerEnded: r.OwnerEnded,
		}
		if r.Retention < 0 || r.Retention > int64(MaxRetention) {
			return corrupt("snapshot node %d has a bad retention %d", r.ID, r.Retention)
		}
		if r.Keyed > KeyNode || (r.Keyed == KeyNode) != (r.KeyRes != "") || r.KeyRes != "" && validKey("key_res", r.KeyRes) != nil {
			return corrupt("snapshot node %d has a bad keyed part %d or key resource %q", r.ID, r.Keyed, r.KeyRes)
		}
		if err := e.linkNode(n, r.Parent); err != nil {
			return err
		}
		for k, v := range r.Res {
			if v == nil {
				return corrupt("snapshot node %d has no record of its resource %q", r.ID, k)
			}
			if err := rest.add(n, k, v); err != nil {
				return err
			}
			rs := n.resource(k)
			*rs = resState{capped: v.Capped, cap: v.Cap, used: v.Used, own: v.Own, settled: v.Settled, top: v.Top}
			if v.Rate != nil {
				b, err := restoreBucket(r.ID, k, v.Rate)
				if err != nil {
					return err
				}
				e.putRate(rs, b)
			}
		}
		for k, v := range r.Cls {
			cs := n.class(k)
			cs.limited, cs.limit, cs.held = v.Limited, v.Limit, v.Held
		}
		e.nodes[n.id] = n
		if n.state != Active {
			e.endedNodes++
		}
		e.scheduleNode(n)
	}
	return rest.check(e)
}

// usage is what, per node and resource, the node's children have yet to
// account for of its used: used less own and settled, less each child's
// used. restoreNodes fills it as it builds the nodes, reading each child's
// usage once; every entry left must be zero.
type usage map[nodeRes]int64

type nodeRes struct {
	id  ID
	res string
}

// add counts resource res of n, whose parent is linked already.
func (u usage) add(n *node, res string, v *ResRec) error {
	if v.Used < 0 || v.Own < 0 || v.Settled < 0 {
		return corrupt("snapshot node %d has used %d of %s but its parts add to %d", n.id, v.Used, res, v.Own+v.Settled)
	}
	if left := v.Used - v.Own - v.Settled; left != 0 {
		u[nodeRes{n.id, res}] += left
	}
	if p := n.parent; p != nil && v.Used != 0 {
		if p.res.get(res) == nil {
			return corrupt("snapshot node %d lacks the %s usage of its child %d", p.id, res, n.id)
		}
		k := nodeRes{p.id, res}
		if u[k] -= v.Used; u[k] == 0 {
			delete(u, k)
		}
	}
	return nil
}

// check fails if some node's used is not its parts' sum.
func (u usage) check(e *Engine) error {
	for k, left := range u {
		if left != 0 {
			used := e.nodes[k.id].res.get(k.res).used
			return corrupt("snapshot node %d has used %d of %s but its parts add to %d", k.id, used, k.res, used-left)
		}
	}
	return nil
}

// linkNode hangs n under its parent. Parents have smaller ids than their
// children, so in id order the parent is always there first.
func (e *Engine) linkNode(n *node, parent ID) error {
	if n.id == RootID {
		n.tenant = n
		e.root = n
		return nil
	}
	p := e.nodes[parent]
	if p == nil || p.depth >= MaxDepth {
		return corrupt("snapshot node %d has a missing or too deep parent %d", n.id, parent)
	}
	if p.state != Active && n.state == Active {
		e.noteMidwayLocked(p) // an active node under an ended one: a subtree ended in steps, caught in the middle
	}
	n.parent, n.depth, n.tenant = p, p.depth+1, p.tenant
	if p == e.root {
		n.tenant = n
	}
	n.eff = minDeadline(n.deadline, p.eff)
	p.adopt(n)
	return nil
}

func (e *Engine) scheduleNode(n *node) {
	if n.state != Active {
		e.timers.pushRemoval(n.ended, n.id)
		return
	}
	if n.deadline != 0 && n.eff == n.deadline {
		e.timers.pushDeadline(n.deadline, n.id)
	}
	if n.keyed != NotKeyed {
		e.timers.pushKey(n.created, n.id)
	}
}

func (e *Engine) restoreSessions(recs []SessionRec) error {
	for i := range recs {
		r := &recs[i]
		scope := e.nodes[r.Scope]
		if r.ID == 0 || r.ID >= e.next || e.sessions[r.ID] != nil || scope == nil || len(r.Token) != 32 || r.TTL < 0 {
			return corrupt("snapshot session %d is repeated or has a bad scope, token or ttl", r.ID)
		}
		s := &session{id: r.ID, scope: scope, ttl: r.TTL, opened: r.Opened, expires: r.Opened + r.TTL}
		copy(s.token[:], r.Token)
		if e.tokens[s.token] != nil {
			return corrupt("snapshot session %d repeats a token", r.ID)
		}
		if err := restoreMem(s, r.Mem); err != nil {
			return err
		}
		e.placeMemLocked(s)
		scope.countScoped(1)
		e.sessions[s.id] = s
		e.tokens[s.token] = s
		if s.ttl > 0 {
			e.timers.pushSession(s.expires, s.id)
		}
	}
	return nil
}

// restoreOwners puts every active owned node on its session's list. An
// owned node outlives its session beneath a subtree still ending in steps,
// or while its owner's end waits for the step that ends it (orphans.go):
// it is then queued for that step again. The nodes go on the lists in id
// order, each at the end of its list.
func (e *Engine) restoreOwners() error {
	var gone []ID
	for _, n := range e.nodesByID() {
		if n.owner == 0 || n.state != Active {
			if n.ownerEnded && (n.owner == 0 || n.state != Cancelled) {
				return corrupt("snapshot node %d says its owner's end ended it, but has no owner or is not cancelled", n.id)
			}
			continue
		}
		s := e.sessions[n.owner]
		if s == nil {
			gone = append(gone, n.id)
			continue
		}
		if n.ended != 0 {
			return corrupt("snapshot node %d is marked for its owner's end, but its owner session %d is live", n.id, n.owner)
		}
		ownLocked(n, s)
	}
	e.requeueOrphansLocked(gone)
	return nil
}

// nodesByID returns the nodes in id order.
func (e *Engine) nodesByID() []*node {
	ns := slices.Collect(maps.Values(e.nodes))
	slices.SortFunc(ns, func(a, b *node) int { return cmp.Compare(a.id, b.id) })
	return ns
}

// requeueOrphansLocked queues again the active nodes of gone, in id order,
// whose owner sessions have ended: each marked node, and each one a
// snapshot of a record cut before its owner's end was marked, marked now at
// the snapshot's instant unless it already answers as ended.
func (e *Engine) requeueOrphansLocked(gone []ID) {
	for _, id := range gone {
		n := e.nodes[id]
		if n.ended == 0 && !n.doomed() {
			n.ended = e.last
		}
		if n.ended != 0 {
			e.orphaned = append(e.orphaned, id)
		}
	}
}

func (e *Engine) restoreLeases(recs []LeaseRec) error {
	for i := range recs {
		r := &recs[i]
		n, s := e.nodes[r.Node], e.sessions[r.Session]
		if r.ID == 0 || r.ID >= e.next || e.leases[r.ID] != nil || n == nil || s == nil || n.state != Active || validKey("class", r.Class) != nil {
			return corrupt("snapshot lease %d is repeated or has a bad node, session or class", r.ID)
		}
		l := &lease{id: r.ID, node: n, class: r.Class, session: s, granted: r.Granted, until: r.Until}
		e.leases[l.id] = l
		n.leases.push(l, byNode)
		s.leases.push(l, bySession)
		if l.until != 0 {
			e.timers.pushHold(l.until, l.id)
		}
	}
	return nil
}

// checkCounts verifies that every node's usage and held leases add up from
// its children and its leases, so a damaged snapshot is refused rather than
// served.
func (e *Engine) checkCounts() error {
	held := make(map[*node]map[string]int64)
	for _, l := range e.leases {
		for a := l.node; a != nil; a = a.parent {
			if held[a] == nil {
				held[a] = make(map[string]int64)
			}
			held[a][l.class]++
		}
	}
	for _, n := range e.nodes {
		if err := checkHeld(n, held[n]); err != nil {
			return err
		}
	}
	return nil
}

// checkHeld checks a node's lease counts against the leases held beneath it.
// Most nodes have neither: ranging over their empty maps is what a restart
// of a wide tree would spend its time on.
func checkHeld(n *node, held map[string]int64) error {
	if len(n.cls) == 0 && len(held) == 0 {
		return nil
	}
	for c, cs := range n.cls {
		if cs.held != held[c] {
			return corrupt("snapshot node %d holds %d %s leases but %d are recorded", n.id, cs.held, c, held[c])
		}
	}
	for c, h := range held {
		if n.cls[c] == nil && h != 0 {
			return corrupt("snapshot node %d lacks its %s leases", n.id, c)
		}
	}
	return nil
}

// Replay applies one recorded event. Events must come in sequence order with
// no gap; anything else, or an event that does not fit the tree, is an
// ErrCorrupt error and leaves the engine unusable.
func (e *Engine) Replay(ev *Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.replay = true
	defer func() { e.replay = false }()
	return e.applyLocked(ev)
}

func hasTomb(e *Engine, id ID) bool {
	_, ok := e.tombs[id]
	return ok
}

// restoreMem fills s's request memory from a snapshot, oldest first.
func restoreMem(s *session, recs []MemRec) error {
	if len(recs) > RequestMemoryMax {
		return corrupt("snapshot session %d remembers %d request ids, more than the %d a session keeps", s.id, len(recs), RequestMemoryMax)
	}
	var prev int64
	for _, m := range recs {
		if _, dup := s.mem.index[m.Request]; dup || m.At < prev {
			return corrupt("snapshot session %d remembers request %q twice or out of time order", s.id, m.Request)
		}
		prev = m.At
		s.mem.add(memEntry{req: m.Request, hash: m.Hash, result: m.Result, answer: m.Answer, at: m.At})
	}
	return nil
}
