package engine

import "slices"

// Ending a session's nodes in steps.
//
// A session's end ends every active node it owns, as Cancelled at the
// session's instant, with its subtree. The apply of the session's end only
// marks them, in id order: a marked node stays active, with the instant its
// end will carry in ended, and from then on answers as ended, as a node
// beneath a subtree ending in steps does (endingAs): describe gives it
// Cancelled at that instant for its owner's end, and whatever an ended node
// refuses, it and every node beneath it refuse. A node that already answers
// as ended is left to the end that reaches it. Marking costs a sort by id
// and a lookup a node, not an event. Steps then end the marked nodes, in the
// order their sessions ended and by id, at most stepSize each, every step
// under a hold of the engine lock of its own: each node with a
// KindNodeEnded event for its owner (or a KindNodeEnding when its subtree is
// wide). An end that reaches a marked node first, an ancestor's, ends it as
// its owner's end would have (endNodeLocked). Until its step, a lease on a
// marked node is still live and counts as held. CloseSession takes the
// steps before it answers; those of a lapsed session are taken by Reap.
//
// Replay marks as the live engine did, and the recorded steps end the
// marked nodes. A snapshot keeps a mark (an active node with an instant of
// end), and a restore queues the marked nodes again. A record cut between a
// session's end and its nodes' ends (governord killed in between) so
// replays to marks; an older snapshot of such a cut, without the marks,
// is marked on restore at the snapshot's instant.

// marked reports whether n is an active node its owner's end marked.
func (n *node) marked() bool { return n.state == Active && n.ended != 0 }

// markOwnedLocked marks, at instant at, every active node session s owns
// that does not already answer as ended, and queues them for the steps.
func (e *Engine) markOwnedLocked(s *session, at int64) {
	ids := make([]ID, 0, len(s.owned))
	for id := range s.owned {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if n := e.nodes[id]; n != nil && n.state == Active && !n.doomed() {
			n.ended = at
			e.markNode(n)
			e.orphaned = append(e.orphaned, id)
		}
	}
}

// orphanStepLocked takes one step: it ends the next marked nodes in the
// queue, at most stepSize of them looked at, each for its owner's end. A
// queued node that has ended since, or that a wider end being taken in
// steps will reach, is passed over. It reports whether marked nodes
// remain.
func (e *Engine) orphanStepLocked(now int64) bool {
	for left := e.stepSize(); left > 0 && len(e.orphaned) > 0; left-- {
		n := e.nodes[e.orphaned[0]]
		e.orphaned = e.orphaned[1:]
		if n != nil && n.marked() && !n.endedAbove() {
			e.emitEndLocked(&Event{Owner: n.owner}, n, Cancelled, now)
		}
	}
	if len(e.orphaned) == 0 {
		e.orphaned = nil
	}
	return len(e.orphaned) > 0
}

// trimOrphansLocked drops, after a replayed end, the queued nodes at the
// front that are no longer marked: the recorded steps end them in the
// order they were queued, so that a long replay keeps no more of the queue
// than the steps have left.
func (e *Engine) trimOrphansLocked() {
	for len(e.orphaned) > 0 {
		if n := e.nodes[e.orphaned[0]]; n != nil && n.marked() {
			return
		}
		e.orphaned = e.orphaned[1:]
	}
	e.orphaned = nil
}
