package engine

import "slices"

// endSessionLocked emits the end of session s (closed or expired), then
// ends every active node it owns as Cancelled, in the order of their ids,
// each an event of its own that names the session, so that replay and
// watchers see why. A node beneath an ending one is left to its steps, and a
// wide subtree ends in steps (emitEndLocked).
func (e *Engine) endSessionLocked(s *session, kind Kind, now int64) {
	owned := make([]ID, 0, len(s.owned))
	for id := range s.owned {
		owned = append(owned, id)
	}
	slices.Sort(owned)
	e.emitLocked(&Event{Kind: kind, Target: s.id}, now)
	for _, id := range owned {
		if n := e.nodes[id]; n != nil && n.state == Active && !n.endedAbove() {
			e.emitEndLocked(&Event{Owner: s.id}, n, Cancelled, now)
		}
	}
}

// ownLocked makes session s the owner of the active node n.
func ownLocked(n *node, s *session) {
	n.owner = s.id
	if s.owned == nil {
		s.owned = make(map[ID]struct{})
	}
	s.owned[n.id] = struct{}{}
}

// unownLocked takes the ended node n off its owner's list. (node.disown,
// in siblings.go, takes a child off its parent's.)
func (e *Engine) unownLocked(n *node) {
	if s := e.sessions[n.owner]; s != nil { // no session has id 0
		delete(s.owned, n.id)
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
