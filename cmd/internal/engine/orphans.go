package engine

// Ending a session's nodes in steps.
//
// A session's end ends every active node it owns, as Cancelled at the
// session's instant, with its subtree. The apply of the session's end marks
// them all at once, in O(1) whatever their number: it stamps the session
// with its instant and its place in the order of dooms (doomOrder), and
// every node it owns reaches its session (node.own). From then on such a
// node answers as ended, as a node beneath a subtree ending in steps does
// (doomOf): describe gives it Cancelled at that instant for its owner's
// end, and whatever an ended node refuses, it and every node beneath it
// refuse. A node that already answered as ended when its owner's end came
// (an ancestor ended or marked before) is left to the end that reaches it:
// of the dooms over a node, its own mark, an ancestor's mark and an ended
// ancestor, the earliest in that order decides. Steps then end the marked
// nodes, in the order their sessions ended and by id, at most stepSize
// looked at each, every step under a hold of the engine lock of its own:
// each node with a KindNodeEnded event for its owner (or a KindNodeEnding
// when its subtree is wide). An end that reaches a marked node first, an
// ancestor's, ends it as its owner's end would have (endNodeLocked). Until
// its step, a lease on a marked node is still live and counts as held.
// CloseSession takes the steps before it answers; those of a lapsed session
// are taken by Reap.
//
// Replay marks as the live engine did, and the recorded steps end the
// marked nodes. A snapshot keeps a mark (an active node with an instant of
// end): Capture lists the marked nodes as changed, at most its chunk in a
// part, before it calls a delta whole. A restore queues the marked nodes
// again. A record cut between a session's end and its nodes' ends (governord
// killed in between) so replays to marks; an older snapshot of such a cut,
// without the marks, is marked on restore at the snapshot's instant.

// doomNext returns the next place in the order of dooms: the order in which
// nodes ended and sessions' ends marked their nodes since the engine was
// built. A doom a restore brought has place 0, before all.
func (e *Engine) doomNext() uint64 {
	e.dooms++
	return e.dooms
}

// ownMark returns the instant and the place of n's own mark by its owner's
// end: a mark a restore brought (n.ended on an active node), or its owner
// session's end. It reports false when n has none.
func (n *node) ownMark() (int64, uint64, bool) {
	switch {
	case n.ended != 0:
		return n.ended, 0, true
	case n.own != nil && n.own.ended != 0:
		return n.own.ended, n.own.doom, true
	}
	return 0, 0, false
}

// marked reports whether n is an active node its owner's end marked, the
// first doom over it.
func (n *node) marked() bool {
	if n.state != Active {
		return false
	}
	_, _, _, own := n.doomOf()
	return own
}

// markOwnedLocked marks, at instant at, every active node session s owns
// that does not already answer as ended, and queues s for the steps. It
// costs O(1): the nodes reach their mark through s.
func (e *Engine) markOwnedLocked(s *session, at int64) {
	s.ended, s.doom = at, e.doomNext()
	if s.owned.len() > 0 {
		e.ownerEnds = append(e.ownerEnds, s)
		e.unlisted = append(e.unlisted, s)
	}
}

// orphanStepLocked takes one step: it ends the next marked nodes, at most
// stepSize of them looked at, each for its owner's end: those a restore
// queued first, then those of each ended session in id order. A node that
// has ended since, or that a wider end being taken in steps will reach, is
// passed over. It reports whether marked nodes remain.
func (e *Engine) orphanStepLocked(now int64) bool {
	left := e.stepSize()
	for ; left > 0 && len(e.orphaned) > 0; left-- {
		n := e.nodes[e.orphaned[0]]
		e.orphaned = e.orphaned[1:]
		e.endOrphanLocked(n, now)
	}
	if len(e.orphaned) == 0 {
		e.orphaned = nil
	}
	pageOwned(&e.ownerEnds, func(s *session) *ID { return &s.after }, &left, func(n *node) { e.endOrphanLocked(n, now) })
	e.unlisted = dropEmptied(e.unlisted)
	return len(e.orphaned)+len(e.ownerEnds) > 0
}

// dropEmptied drops the sessions at the front of list whose nodes have all
// ended, so that an engine whose changes no capture takes keeps no more of
// the ended sessions than the steps have left; nil when none remains.
func dropEmptied(list []*session) []*session {
	for len(list) > 0 && list[0].owned.len() == 0 {
		list = list[1:]
	}
	if len(list) == 0 {
		return nil
	}
	return list
}

// endOrphanLocked ends the queued node n for its owner's end, unless it
// has ended since or a wider end being taken in steps will reach it.
func (e *Engine) endOrphanLocked(n *node, now int64) {
	if n != nil && n.marked() && !n.endedAbove() {
		e.emitEndLocked(&Event{Owner: n.owner}, n, Cancelled, now)
	}
}

// trimOrphansLocked drops, after a replayed end, what is queued at the
// front and no longer marked: the recorded steps end the nodes in the order
// they were queued, so that a long replay keeps no more of the queue than
// the steps have left.
func (e *Engine) trimOrphansLocked() {
	for len(e.orphaned) > 0 {
		if n := e.nodes[e.orphaned[0]]; n != nil && n.marked() {
			break
		}
		e.orphaned = e.orphaned[1:]
	}
	if len(e.orphaned) == 0 {
		e.orphaned = nil
	}
	e.ownerEnds = dropEmptied(e.ownerEnds)
	e.unlisted = dropEmptied(e.unlisted)
}

// listMarksLocked lists as changed, for Capture, the nodes of ended
// sessions not listed yet, at most *left of them looked at, counted off
// *left. It reports whether all are listed.
func (e *Engine) listMarksLocked(left *int) bool {
	pageOwned(&e.unlisted, func(s *session) *ID { return &s.listed }, left, e.markNode)
	return e.unlisted == nil
}

// pageOwned walks, in id order, the nodes of the sessions at the front of
// *list from each session's cursor (the ID cursor returns) on, calling fn
// on each; a session with none left counts as one. It stops once *left
// are counted off, and takes a session off the list once its nodes are
// walked; *list is nil when none remains.
func pageOwned(list *[]*session, cursor func(*session) *ID, left *int, fn func(*node)) {
	for *left > 0 && len(*list) > 0 {
		s := (*list)[0]
		at := cursor(s)
		page, next := s.owned.page(*at, *left)
		*left -= max(len(page), 1)
		for _, n := range page {
			fn(n)
		}
		if *at = next; next == 0 {
			*list = (*list)[1:]
		}
	}
	if len(*list) == 0 {
		*list = nil
	}
}
