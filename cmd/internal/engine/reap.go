package engine

// Reap takes every decision that time has made and no call has taken yet:
// sessions that lapsed, deadlines that passed, holds that ran out (in the
// order of their instants), ended nodes past their retention, key nodes idle
// for Settings.KeyIdle. It also forgets tombstones whose time is up, and
// takes the steps left of ending wide subtrees (each step under the lock on
// its own). Every call that touches an object makes the same decision about
// it, so results never depend on when Reap runs; only promptness does. It
// returns how many events it emitted.
func (e *Engine) Reap(c *Call) int {
	return e.reapOnce(c) + e.finishEnds(c)
}

func (e *Engine) reapOnce(c *Call) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.nowLocked()
	start := e.seq
	e.reapDueLocked(now)
	e.reapTombsLocked(now)
	e.reapRemovalsLocked(now)
	e.reapKeysLocked(now)
	e.finishLocked(c, now) // the grants of freed slots are Reap's events too
	return int(e.seq - start)
}

// clockLocked reads the time for a call and first takes every decision of
// time already due by then (a session lapsed, a deadline passed, a hold
// ran out), as Reap would: no call sees any of them as still live, and none
// counts a slot whose hold ran out as held, whenever Reap last ran. Each
// decision is taken once, so this costs what is due, not what is held.
func (e *Engine) clockLocked() int64 {
	now := e.nowLocked()
	e.reapDueLocked(now)
	return now
}

// reapDueLocked takes every decision that time made by now, in the order of
// the instants at which time made them: a session lapsed, a deadline passed,
// a hold ran out (at one instant, in that order). Reap calls it, and so does
// every other call before anything else (clockLocked). A slot a decision
// frees goes to the queue before the next decision is taken, as it would
// have had each been taken at its instant: a waiter whose session lapsed
// later is granted the slot, and its lease then ends with the session. So a lease
// that both its hold and its node's deadline (or its session) would end
// ends by the earliest of them, however late the decision is taken.
func (e *Engine) reapDueLocked(now int64) {
	for {
		kind, t, ok := e.timers.nextDue(now)
		if !ok {
			return
		}
		switch kind {
		case dueSession:
			e.reapSessionLocked(t, now)
		case dueDeadline:
			if n := e.nodes[t.id]; n != nil && n.state == Active {
				e.expireDeadlineLocked(n, t.at, now)
			}
		case dueHold:
			if l := e.leases[t.id]; l != nil && l.until == t.at {
				e.emitLocked(&Event{Kind: KindLeaseExpired, Target: l.id}, now)
			}
		}
		e.dispatchFreedLocked(now)
	}
}

// reapSessionLocked ends a session whose timer is due, unless a heartbeat
// moved its expiry since the timer was set: then the timer moves with it,
// and is taken again at the session's true instant.
func (e *Engine) reapSessionLocked(t timerEntry, now int64) {
	s := e.sessions[t.id]
	switch {
	case s == nil || s.ttl == 0:
	case s.expires != t.at:
		e.timers.pushSession(s.expires, s.id)
	default:
		e.endSessionLocked(s, KindSessionExpired, now)
	}
}

func (e *Engine) reapTombsLocked(now int64) {
	for {
		t, ok := e.timers.tombs.due(now)
		if !ok {
			return
		}
		e.forgetTombLocked(t.id, now)
	}
}

func (e *Engine) reapRemovalsLocked(now int64) {
	retention := int64(e.settings.NodeRetention)
	var ids []ID
	var later []timerEntry
	for {
		t, ok := e.timers.removals.due(now - retention)
		if !ok {
			break
		}
		n := e.nodes[t.id]
		switch {
		case n == nil || n.state == Active:
		case n.ended+e.keptFor(n) > now:
			later = append(later, timerEntry{n.ended + e.keptFor(n) - retention, n.id})
		case scopedInside(n) || e.endingInside(n):
			later = append(later, timerEntry{now, n.id})
		default:
			ids = append(ids, n.id)
		}
	}
	for _, t := range later {
		e.timers.pushRemoval(t.at, t.id)
	}
	if ids = topmost(e, ids); len(ids) > 0 {
		e.emitLocked(&Event{Kind: KindNodesRemoved, IDs: ids}, now)
	}
}

// keptFor is how long n stays in the tree once ended: the node_retention
// setting, or its own retention when longer.
func (e *Engine) keptFor(n *node) int64 {
	return max(int64(e.settings.NodeRetention), n.retention)
}

// topmost drops the ids that lie beneath another id of the list: removing a
// node removes its subtree.
func topmost(e *Engine, ids []ID) []ID {
	set := make(map[ID]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	out := ids[:0]
	for _, id := range ids {
		covered := false
		for a := e.nodes[id].parent; a != nil && !covered; a = a.parent {
			covered = set[a.id]
		}
		if !covered {
			out = append(out, id)
		}
	}
	return out
}

// scopedInside reports whether a live session is scoped to n or beneath it;
// such a node is kept until the session ends.
func scopedInside(n *node) bool {
	if n.scoped > 0 {
		return true
	}
	for _, ch := range n.children {
		if scopedInside(ch) {
			return true
		}
	}
	return false
}
