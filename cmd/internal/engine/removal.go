package engine

// Removing ended subtrees in steps.
//
// An ended node is removed with its subtree once it has been kept for its
// retention (keptFor), no live session is scoped to it or beneath it, and no
// subtree beneath it is still being ended. Removal goes in steps of at most
// stepSize moves, each under the engine lock on its own, children before
// their parent: a KindNodesRemoved event lists the ids in that order, so
// that each node is childless when its turn comes and costs O(log
// children), and other calls run between two steps. Between two steps the
// nodes not yet removed are ended nodes like any other. Where a removal
// stands is not recorded: after a restart, the removal timer of each node
// not yet removed (pushed again by the restore or by the replayed end)
// finds the rest.

// removeCursor is where removing a subtree goes on: n's children with ids
// above after, then n itself.
type removeCursor struct {
	n     *node
	after ID
}

// removeStepLocked takes one step of removal: at most stepSize moves, each
// a removal timer looked at or a node visited, children removed before
// their parent, in one KindNodesRemoved event. It takes a new due timer only
// once the subtree being removed is gone. It reports whether it ran out of
// moves having made progress, so that steps may remain: a step whose every
// move only put a timer off (a session scoped inside, a subtree inside
// still ending) reports none, or a retention of 0, which makes a put-off
// timer due again at once, would have Reap step for ever. A step emits more
// than one event when it finishes a subtree and starts another.
func (e *Engine) removeStepLocked(now int64) bool {
	var ids []ID
	var later []timerEntry
	progress := false
	left := e.stepSize()
	for ; left > 0; left-- {
		if len(e.removing) > 0 {
			ids, progress = e.removeMoveLocked(ids), true
			continue
		}
		ids = e.emitRemovedLocked(ids, now) // a subtree listed is gone before the next timer is looked at
		t, ok := e.timers.removals.due(now - int64(e.settings.NodeRetention))
		if !ok {
			break
		}
		put := len(later)
		if later = e.startRemovalLocked(t.id, now, later); len(later) == put {
			progress = true
		}
	}
	e.emitRemovedLocked(ids, now)
	for _, t := range later {
		e.timers.pushRemoval(t.at, t.id)
	}
	return left == 0 && progress
}

// emitRemovedLocked removes the nodes listed, if any, in one event, and
// returns an empty list.
func (e *Engine) emitRemovedLocked(ids []ID, now int64) []ID {
	if len(ids) > 0 {
		e.emitLocked(&Event{Kind: KindNodesRemoved, IDs: ids}, now)
	}
	return nil
}

// startRemovalLocked starts removing node id, whose removal timer is due,
// or appends to later the instant to look at it again: when its own
// retention runs out, or, if a session is scoped inside it or a subtree
// inside it is being ended, after another retention.
func (e *Engine) startRemovalLocked(id ID, now int64, later []timerEntry) []timerEntry {
	n := e.nodes[id]
	retention := int64(e.settings.NodeRetention)
	switch {
	case n == nil || n.state == Active:
	case n.ended+e.keptFor(n) > now:
		later = append(later, timerEntry{n.ended + e.keptFor(n) - retention, n.id})
	case n.scoped > 0 || e.endingInside(n):
		later = append(later, timerEntry{now, n.id})
	default:
		e.removing = append(e.removing, removeCursor{n: n})
	}
	return later
}

// removeMoveLocked makes one move of the removal under way: it goes down
// into the next child that has children, or lists the next childless child,
// or, once no child is left, lists the node itself. It returns ids with
// what it listed.
func (e *Engine) removeMoveLocked(ids []ID) []ID {
	top := &e.removing[len(e.removing)-1]
	var one [1]*node
	kids, next := top.n.order.appendPage(one[:0], top.after, 1)
	switch {
	case len(kids) == 1:
		ch := kids[0]
		top.after = ch.id
		if ch.order.len() > 0 {
			e.removing = append(e.removing, removeCursor{n: ch})
			return ids
		}
		return e.appendStepID(ids, ch.id)
	case next != 0: // a run of holes
		top.after = next
		return ids
	}
	e.removing = e.removing[:len(e.removing)-1]
	return e.appendStepID(ids, top.n.id)
}

// keptFor is how long n stays in the tree once ended: the node_retention
// setting, or its own retention when longer.
func (e *Engine) keptFor(n *node) int64 {
	return max(int64(e.settings.NodeRetention), n.retention)
}
