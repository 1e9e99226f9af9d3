package engine

// Reap takes every decision that time has made and no call has taken yet:
// sessions that lapsed, deadlines that passed, holds that ran out, ended
// nodes past their retention. It also forgets tombstones whose time is up.
// Every call that touches an object makes the same decision about it, so
// results never depend on when Reap runs; only promptness does. It returns
// how many events it emitted.
func (e *Engine) Reap(c *Call) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.nowLocked()
	start := e.seq
	e.reapSessionsLocked(now)
	e.reapDeadlinesLocked(now)
	e.reapHoldsLocked(now)
	e.reapTombsLocked(now)
	e.reapRemovalsLocked(now)
	e.finishLocked(c, now) // the grants of freed slots are Reap's events too
	return int(e.seq - start)
}

func (e *Engine) reapSessionsLocked(now int64) {
	var later []timerEntry
	for {
		t, ok := e.timers.sessions.due(now)
		if !ok {
			break
		}
		s := e.sessions[t.id]
		switch {
		case s == nil || s.ttl == 0:
		case now >= s.expires:
			e.emitLocked(&Event{Kind: KindSessionExpired, Target: s.id}, now)
		default:
			later = append(later, timerEntry{s.expires, s.id})
		}
	}
	for _, t := range later {
		e.timers.pushSession(t.at, t.id)
	}
}

func (e *Engine) reapDeadlinesLocked(now int64) {
	for {
		t, ok := e.timers.deadlines.due(now)
		if !ok {
			return
		}
		if n := e.nodes[t.id]; n != nil && n.state == Active {
			e.expireDeadlineLocked(n, now)
		}
	}
}

func (e *Engine) reapHoldsLocked(now int64) {
	for {
		t, ok := e.timers.holds.due(now)
		if !ok {
			return
		}
		if l := e.leases[t.id]; l != nil && l.until != 0 && now >= l.until {
			e.emitLocked(&Event{Kind: KindLeaseExpired, Target: l.id}, now)
		}
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
		case n == nil || n.state == Active || n.ended != t.at:
		case n.ended+retention > now:
			later = append(later, timerEntry{n.ended, n.id})
		case scopedInside(n):
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
