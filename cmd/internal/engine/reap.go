package engine

import "math"

// Reap takes every decision that time has made and no call has taken yet:
// sessions that lapsed, deadlines that passed, holds that ran out (in the
// order of their instants, at most stepSize of them under one hold of the
// lock, see dueStepLocked), ended nodes past their retention, key nodes idle
// for Settings.KeyIdle (at most stepSize looked at a hold, see
// keyStepLocked). It also forgets tombstones whose time is up, takes
// the steps left of ending the nodes of ended sessions and wide subtrees,
// and removes ended subtrees in steps (each step under the lock on its own;
// see orphans.go, ending.go and removal.go). Every call that touches an object makes the same decision
// about it, so results never depend on when Reap runs; only promptness
// does. It returns how many events it emitted.
func (e *Engine) Reap(c *Call) int {
	return e.steps(c, e.dueStepLocked) + e.reapOnce(c) + e.steps(c, e.keyStepLocked) +
		e.steps(c, e.orphanStepLocked) + e.finishEnds(c) + e.steps(c, e.removeStepLocked)
}

func (e *Engine) reapOnce(c *Call) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.nowLocked()
	start := e.seq
	e.reapDueLocked(now)
	e.reapTombsLocked(now)
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
// a hold ran out (at one instant, in that order). Every call but Reap takes
// them so before anything else (clockLocked); Reap takes them in steps
// (dueStepLocked). A slot a decision
// frees goes to the queue before the next decision is taken, as it would
// have had each been taken at its instant: a waiter whose session lapsed
// later is granted the slot, and its lease then ends with the session. So a lease
// that both its hold and its node's deadline (or its session) would end
// ends by the earliest of them, however late the decision is taken.
func (e *Engine) reapDueLocked(now int64) { e.takeDueLocked(now, math.MaxInt) }

// dueStepLocked is Reap's step of reapDueLocked: it takes at most stepSize
// of the decisions time made by now, so that a burst of them (sessions
// opened together that lapse together, holds granted together that run out
// together) is taken by holds of the lock as short as the steps of ending
// and removal, with other calls between two of them. A call that comes
// between takes every decision still due first (clockLocked), so none sees
// one as still live, and each decision is taken once, in the same order,
// whoever takes it. It reports whether decisions may remain due.
func (e *Engine) dueStepLocked(now int64) bool { return e.takeDueLocked(now, e.stepSize()) }

// takeDueLocked takes up to k of the decisions time made by now, as
// reapDueLocked describes, and reports whether it stopped at k.
func (e *Engine) takeDueLocked(now int64, k int) bool {
	for ; k > 0; k-- {
		kind, t, ok := e.timers.nextDue(now)
		if !ok {
			return false
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
	return true
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
