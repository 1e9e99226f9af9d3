package engine

// endSessionLocked emits the end of session s (closed or expired). Its
// apply marks the active nodes s owned, which later steps end, each with
// an event of its own that names the session, so that replay and watchers
// see why (see orphans.go).
func (e *Engine) endSessionLocked(s *session, kind Kind, now int64) {
	e.emitLocked(&Event{Kind: kind, Target: s.id}, now)
}

// ownLocked makes session s the owner of the active node n.
func ownLocked(n *node, s *session) {
	n.owner, n.own = s.id, s
	s.owned.add(n)
}

// unownLocked takes the ended node n off its owner's list, the owner's
// session live or ended. (node.disown, in siblings.go, takes a child off
// its parent's.)
func (e *Engine) unownLocked(n *node) {
	if s := n.own; s != nil {
		s.owned.remove(n.id)
		n.own = nil
	}
}

// markOwnerEnd checks that an event ending n for its owner's end (ev.Owner
// set) names n's owner and Cancelled, and marks n as ended by it.
func markOwnerEnd(ev *Event, n *node) error {
	if ev.Owner != 0 && (ev.Owner != n.owner || ev.State != Cancelled) {
		return corrupt("event %d ends node %d for session %d, which does not own it", ev.Seq, ev.Node, ev.Owner)
	}
	n.ownerEnded = ev.Owner != 0
	return nil
}
