package engine

import (
	"cmp"
	"slices"
)

// Ending a wide subtree in steps.
//
// A node whose subtree holds fewer than endStep nodes ends with it in one
// step (KindNodeEnded), as it always did. A wider one ends at once on its own
// (KindNodeEnding), and the active nodes beneath it end in later steps of at
// most endStep nodes looked at each (KindNodesEnded), each step under the
// engine lock on its own, so other calls run between two steps. A node being
// ended this way (an active node with an ended ancestor) already answers as
// ended: describe reports it in the state and at the instant its step will
// give it, and every call that would create under it, charge it, acquire on
// it, scope a session to it or grant a queued acquire on it is refused with
// ErrNodeEnded. Until its step, a lease on it is still live (validate
// answers so, release releases it) and counts as held. Cancel and Close take
// every step before they answer; the steps of a deadline are taken by Reap.

// defaultEndStep is how many nodes one step of ending a subtree looks at;
// the steps of removal, of an owner's end and of due decisions do as much.
const defaultEndStep = 64

// endCursor is where ending a subtree goes on: the children of parent, an
// ended node, with ids above after.
type endCursor struct {
	parent *node
	after  ID
}

// endedAbove reports whether an ancestor of n has ended: n is then being
// ended, a step at a time.
func (n *node) endedAbove() bool {
	for a := n.parent; a != nil; a = a.parent {
		if a.state != Active {
			return true
		}
	}
	return false
}

// doomed reports whether the active node n already answers as ended: an
// ancestor has ended, or n or an ancestor is marked by its owner's end
// (see orphans.go). A step will end it.
func (n *node) doomed() bool {
	st, _, _, _ := n.doomOf()
	return st != Active
}

// doomOf returns the state and the instant the step that ends the active
// node n will give it, from the earliest doom over it in the order of dooms
// (its own mark, an ancestor's mark, an ended ancestor), with that doom's
// place in the order, and reports whether the doom is n's own mark; Active
// and 0 when there is none. Of dooms in one place (one session's end marks
// a node and its descendants), the farthest decides, as marking in id
// order did; of those a restore brought, all in place 0, the nearest,
// since a restore keeps a mark only where it decided.
func (n *node) doomOf() (State, int64, uint64, bool) {
	st, at, own, first := State(Active), int64(0), false, uint64(0)
	for a := n; a != nil; a = a.parent {
		ast, aat, place, ok := Cancelled, int64(0), uint64(0), false
		if a.state != Active {
			ast, aat, place, ok = belowState(a.state), a.ended, a.doomAt, true
		} else {
			aat, place, ok = a.ownMark()
		}
		if ok && (st == Active || place < first || place == first && place > 0) {
			st, at, own, first = ast, aat, a == n, place
			if place == 0 {
				break
			}
		}
	}
	return st, at, first, own
}

// stepSize is how many nodes a step looks at.
func (e *Engine) stepSize() int {
	if e.endStep > 0 {
		return e.endStep
	}
	return defaultEndStep
}

// wide reports whether n's subtree, n included, has at least stepSize nodes;
// it looks at no more than that many.
func (e *Engine) wide(n *node) bool {
	left := e.stepSize() - 1
	var buf [defaultEndStep]*node // holds every node it looks at, on the stack
	stack := append(buf[:0], n)
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for ch := range m.order.all() {
			if left--; left <= 0 {
				return true
			}
			stack = append(stack, ch)
		}
	}
	return false
}

// emitEndLocked ends n as st: in one event when its subtree is narrow, else
// n at once and the first step of its subtree. ev carries the caller's
// request id, if any.
func (e *Engine) emitEndLocked(ev *Event, n *node, st State, now int64) {
	ev.Kind, ev.Node, ev.State = KindNodeEnded, n.id, st
	if e.wide(n) {
		ev.Kind = KindNodeEnding
	}
	e.emitLocked(ev, now)
	if ev.Kind == KindNodeEnding {
		e.stepLocked(now)
	}
}

func (e *Engine) applyNodesEnded(ev *Event) error {
	for _, id := range ev.IDs {
		n := e.nodes[id]
		if n == nil || n.state != Active || n.parent == nil || n.parent.state == Active {
			return corrupt("event %d steps into node %d, which is not an active node under an ended one", ev.Seq, id)
		}
		e.endNodeLocked(n, belowState(n.parent.state), n.parent.ended)
		e.followLocked(n)
	}
	return nil
}

// followLocked notes that n's active children are to be ended by later
// steps. In replay no cursor is kept, as the recorded steps that follow
// move on where the live ones did: n is noted as midway instead, until
// its last active child has ended.
func (e *Engine) followLocked(n *node) {
	if n.activeKids == 0 {
		return
	}
	if e.replay {
		e.noteMidwayLocked(n)
		return
	}
	e.ending = append(e.ending, endCursor{parent: n})
}

// noteMidwayLocked notes the ended node n, which has an active child, as a
// subtree whose ending a restore or a replay caught in the middle. Every
// note costs O(1), and the note goes once its last active child has ended
// (endNodeLocked), so that the notes are the subtrees still to end, however
// large the tree.
func (e *Engine) noteMidwayLocked(n *node) {
	if e.midway == nil {
		e.midway = make(map[ID]*node)
	}
	e.midway[n.id] = n
}

// resumeLocked turns what a restore or a replay noted as midway into
// cursors, in id order, the first time a live step or a removal asks:
// O(k log k) for the k subtrees still to end.
func (e *Engine) resumeLocked() {
	if len(e.midway) == 0 {
		return
	}
	at := len(e.ending)
	for _, n := range e.midway {
		e.ending = append(e.ending, endCursor{parent: n})
	}
	slices.SortFunc(e.ending[at:], func(a, b endCursor) int { return cmp.Compare(b.parent.id, a.parent.id) })
	clear(e.midway)
}

// stepLocked takes one step: it ends the active nodes among the next
// stepSize nodes to look at, in one KindNodesEnded event. It reports whether
// steps remain.
func (e *Engine) stepLocked(now int64) bool {
	e.resumeLocked()
	var ids []ID
	var buf [defaultEndStep]*node // the children looked at, on the stack
	for left := e.stepSize(); left > 0 && len(e.ending) > 0; {
		top := &e.ending[len(e.ending)-1]
		kids, next := top.parent.order.appendPage(buf[:0], top.after, left)
		switch {
		case next == 0:
			e.ending = e.ending[:len(e.ending)-1]
			left -= max(len(kids), 1)
		case len(kids) < left: // it stopped at a run of holes, having looked at 2*left+1 places
			top.after, left = next, 0
		default:
			top.after, left = next, left-len(kids)
		}
		for _, ch := range kids {
			if ch.state == Active {
				ids = e.appendStepID(ids, ch.id)
			}
		}
	}
	if len(ids) > 0 {
		e.emitLocked(&Event{Kind: KindNodesEnded, IDs: ids}, now)
	}
	return len(e.ending) > 0
}

// appendStepID appends id to ids, the list of one step's event, made with
// room for a whole step the first time: one allocation a step, where
// growing it would take one for each doubling.
func (e *Engine) appendStepID(ids []ID, id ID) []ID {
	if ids == nil {
		ids = make([]ID, 0, e.stepSize())
	}
	return append(ids, id)
}

// endingInside reports whether a subtree being ended lies at n or beneath
// it; n is then kept until it has ended whole.
func (e *Engine) endingInside(n *node) bool {
	e.resumeLocked()
	for _, c := range e.ending {
		if c.parent.within(n) {
			return true
		}
	}
	return false
}

// finishEnds takes the steps left of every subtree being ended; c.Seq ends
// at the last. It returns how many events the steps emitted.
func (e *Engine) finishEnds(c *Call) int { return e.steps(c, e.stepLocked) }

// steps calls step until it reports that no step remains, each call under
// the lock on its own, so other calls run between them (it yields its
// processor after each, so a call waiting for the lock gets it before the
// next step does); c.Seq ends at the last. It returns how many events the
// steps emitted.
func (e *Engine) steps(c *Call, step func(now int64) bool) int {
	events, pace := 0, e.pacer()
	for {
		e.mu.Lock()
		now := e.nowLocked()
		start := e.seq
		more := step(now)
		e.finishLocked(c, now)
		events += int(e.seq - start)
		e.mu.Unlock()
		if !more {
			return events
		}
		pace.Between()
	}
}
