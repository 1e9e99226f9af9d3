package engine

import "slices"

// A session's end and the ends of the nodes it owns are one decision, but
// the record may carry them in more than one commit: the writer cuts batches
// where it likes. A record cut between them (governord killed in between)
// holds a session that has ended and active nodes it owned. Replay and
// restore note such nodes as orphaned, and the first decision after the load
// ends each, as the session's end would have (endSessionLocked). A node
// beneath a subtree still ending in steps is left to those steps, as it is
// live.

// noteOrphansLocked notes, while replaying the end of session s, the active
// nodes it owns: the events that end them follow in a whole record, and
// endOrphansLocked then finds them ended.
func (e *Engine) noteOrphansLocked(s *session) {
	if !e.replay {
		return // endSessionLocked ends them right after
	}
	for id := range s.owned {
		e.orphaned = append(e.orphaned, id)
	}
}

// endOrphansLocked ends every noted node that is still an active orphan, in
// id order, each as its session's end would have.
func (e *Engine) endOrphansLocked(now int64) {
	if len(e.orphaned) == 0 {
		return
	}
	ids := e.orphaned
	e.orphaned = nil
	slices.Sort(ids)
	for _, id := range ids {
		if n := e.nodes[id]; n != nil && e.orphan(n) {
			e.emitEndLocked(&Event{Owner: n.owner}, n, Cancelled, now)
		}
	}
}

// orphan reports whether n is active, owned by a session that has ended,
// and not left to the steps of an ending subtree.
func (e *Engine) orphan(n *node) bool {
	return n.state == Active && n.owner != 0 && e.sessions[n.owner] == nil && !n.endedAbove()
}
