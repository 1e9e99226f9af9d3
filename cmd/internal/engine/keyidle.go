package engine

// A key node ConsumeKeyed created, once it holds nothing a new key node would
// not (its bucket full, no debt, no booked slot, no quota, limit, lease or
// other cap of an admin's) and has stayed so for Settings.KeyIdle, answers
// every request exactly as a new one would. Reap forgets it then, with an
// event, and its group node with it when that was the group's last key. A
// call that finds a key due uses it as it is: the answer is the same either
// way, so only Reap forgets, and replay forgets what Reap forgot.

// Keyed says which part a node plays for ConsumeKeyed.
type Keyed uint8

// The parts a node plays for ConsumeKeyed.
const (
	NotKeyed Keyed = iota // a node created any other way
	KeyGroup              // the node of a group name, holding its keys
	KeyNode               // the node of one key, created with one rate cap
)

func validKeyedSpec(s *Spec) error {
	switch s.Keyed {
	case NotKeyed, KeyGroup:
	case KeyNode:
		if len(s.Rates) != 1 {
			return invalid("keyed", "a key node is created with exactly one rate cap, got %d", len(s.Rates))
		}
	default:
		return invalid("keyed", "must be 0 (none), 1 (group) or 2 (key), got %d", uint8(s.Keyed))
	}
	return nil
}

// markKeyed records the part a new node plays and, for a keyed node, starts
// the timer at which Reap first looks at it.
func (e *Engine) markKeyed(n *node, sp *Spec) {
	n.keyed = sp.Keyed
	if n.keyed == KeyNode {
		for r := range sp.Rates {
			n.keyRes = r
		}
	}
	if n.keyed != NotKeyed {
		e.timers.pushKey(n.created, n.id)
	}
}

// fullAt is the first instant at which the bucket is as a new one: a token
// bucket's window has ended (a window that is open, even with nothing
// charged, ends at another instant than a new one would), a leaky bucket is
// full with nothing booked.
func (b *bucket) fullAt() int64 {
	if b.Algorithm == TokenBucket {
		return b.end
	}
	return b.tat.ceil()
}

// keySince is when a keyed node came to hold only what a new one would, if
// it does at all: it is active, has no child, no quota or limit or defaults,
// no lease, waiter or scoped session, and no rate cap but a key node's own.
// kids is how many children n is to be taken to have.
func (n *node) keySince(kids int) (int64, bool) {
	if n.keyed == NotKeyed || n.state != Active || n.doomed() || kids > 0 || n.scoped > 0 || !emptyDefaults(n.defs()) {
		return 0, false
	}
	for _, cs := range n.cls {
		if cs.limited || cs.held > 0 || cs.group != nil && cs.group.n > 0 {
			return 0, false
		}
	}
	since := n.created
	for r, rs := range n.res.all() {
		switch {
		case rs.capped:
			return 0, false
		case rs.rate == nil:
		case n.keyed != KeyNode || r != n.keyRes:
			return 0, false
		default:
			since = max(since, rs.rate.fullAt())
		}
	}
	return since, true
}

func emptyDefaults(d *Defaults) bool {
	return len(d.Quotas) == 0 && len(d.Limits) == 0 && len(d.Rates) == 0 && d.Children == nil
}

// forgettable reports whether n, taken to have kids children, may be
// forgotten at instant at.
func (e *Engine) forgettable(n *node, kids int, at int64) bool {
	idle := int64(e.settings.KeyIdle)
	since, ok := n.keySince(kids)
	return ok && idle > 0 && since+idle <= at
}

// keyStepLocked is a step of Reap: it forgets, in one event, the keyed
// nodes that have held only what a new one would for KeyIdle among the
// next stepSize key timers due, and each group node whose last key goes
// with them, so that many keys idle at once (a tenant's 50,000, say) are
// forgotten by holds of the lock as short as other steps. A timer entry is
// the earliest instant a node may have started to qualify; a node found
// not to qualify is looked at again once it could, which is never within
// the same Reap. It reports whether it stopped with timers left to look
// at.
func (e *Engine) keyStepLocked(now int64) bool {
	idle := int64(e.settings.KeyIdle)
	if idle == 0 {
		return false
	}
	var ids []ID
	var later []timerEntry
	left := e.stepSize()
	for ; left > 0; left-- {
		t, ok := e.timers.keys.due(now - idle)
		if !ok {
			break
		}
		n := e.nodes[t.id]
		if n == nil || n.state != Active {
			continue
		}
		since, ok := n.keySince(n.order.len())
		switch {
		case !ok:
			later = append(later, timerEntry{now, n.id})
		case since+idle > now:
			later = append(later, timerEntry{since, n.id})
		default:
			ids = append(ids, n.id)
		}
	}
	for _, t := range later {
		e.timers.pushKey(t.at, t.id)
	}
	if ids = e.withEmptiedGroups(ids, now); len(ids) > 0 {
		e.emitLocked(&Event{Kind: KindKeysForgotten, IDs: ids}, now)
	}
	return left == 0
}

// withEmptiedGroups appends to the keys forgotten the group nodes all of
// whose children are among them, if such a group qualifies once empty. It
// counts the keys forgotten under each group, so its cost is the number of
// keys, not of their siblings.
func (e *Engine) withEmptiedGroups(ids []ID, now int64) []ID {
	gone := make(map[*node]int, 1)
	for _, id := range ids {
		gone[e.nodes[id].parent]++
	}
	for _, id := range ids {
		g := e.nodes[id].parent
		if g.keyed != KeyGroup || gone[g] != g.order.len() {
			continue
		}
		gone[g] = -1 // appended once
		if e.forgettable(g, 0, now) {
			ids = append(ids, g.id)
		}
	}
	return ids
}

func (e *Engine) applyKeysForgotten(ev *Event) error {
	for _, id := range ev.IDs {
		n := e.nodes[id]
		if n == nil || e.replay && !e.forgettable(n, n.order.len(), ev.Time) { // keyStepLocked checked a live one
			return corrupt("event %d forgets node %d, which is not a key node idle for %s", ev.Seq, id, e.settings.KeyIdle)
		}
		e.forgetKeyLocked(n)
	}
	return nil
}

// forgetKeyLocked takes an idle keyed node out of the tree. What it used
// stays counted in its parent, as for a removed node.
func (e *Engine) forgetKeyLocked(n *node) {
	p := n.parent
	for r, rs := range n.res.all() {
		if rs.used != 0 {
			p.resource(r).settled += rs.used
		}
		if rs.rate != nil {
			e.rateCaps--
		}
	}
	p.disown(n)
	delete(e.nodes, n.id)
	nodeGone(n)
	e.dirty.nodes = append(e.dirty.nodes, n.id)
	e.markNode(p)
}
