package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// watchBuffer is how many changes a watcher may fall behind before it is
// closed.
const watchBuffer = 1024

// hub keeps the shape of the tree as the record holds it (ids, parents,
// names, states, who created each node, which sessions are live) and the
// watchers that follow it. It learns only from committed events, so a
// watcher never sees state that is not on record. publish runs on the
// store's writer goroutine; the other methods on handlers.
type hub struct {
	log *slog.Logger

	mu        sync.Mutex // guards the fields below; taken before the engine lock, never after
	seq       uint64     // the last event applied
	nodes     map[engine.ID]*mnode
	sessions  map[engine.ID]struct{}               // live sessions
	created   map[engine.ID]map[engine.ID]struct{} // session to the nodes it created that are held
	byNode    map[engine.ID]map[*watcher]struct{}  // watchers of one node or subtree, by that node
	mine      map[engine.ID]map[*watcher]struct{}  // created_by_session watchers, by session
	bySession map[engine.ID]map[*watcher]struct{}  // every watcher, by its session
	advanced  chan struct{}                        // closed when seq moves; nil if no one waits
	round     uint64                               // numbers deliveries, so a watcher gets each once
	usage     usageMirror                          // live leases and usage watchers (usage.go)
}

// mnode is a node as the hub mirrors it.
type mnode struct {
	id          engine.ID
	parent      *mnode
	name        string
	creator     engine.ID // the session that created it; 0 if unknown or the daemon
	state       engine.State
	byOwner     bool   // its owner's session ended it
	changed     int64  // unix nanoseconds of its creation or its end
	cause       *mnode // the ancestor whose end ended it; nil if it ended on its own
	children    map[engine.ID]*mnode
	activeBelow int // active nodes beneath it: a subtree watcher of it hears its end once none is left
}

// watcher is one WatchNode stream. The hub owns its registration; the
// handler reads ch until a note marked last, or until gone closes.
type watcher struct {
	session engine.ID
	node    engine.ID // the watched node; 0 for a created_by_session watcher
	subtree bool
	ch      chan note
	gone    chan struct{} // closed when the hub drops the watcher; err says why
	err     error
	round   uint64 // guarded by hub.mu

	usage bool                   // also report use (usage.go)
	dirty map[engine.ID]struct{} // nodes whose use changed since last sent; guarded by hub.mu
	poke  chan struct{}          // receives when dirty gains a node; nil without usage
}

// note is one change for a watcher; last ends the stream without error.
type note struct {
	msg  *governorv1.WatchNodeResponse
	last bool
}

func newHub(dump *engine.Snapshot, log *slog.Logger) *hub {
	h := &hub{log: log}
	h.loadLocked(dump)
	return h
}

// loadLocked replaces the mirror with the state of a dump.
func (h *hub) loadLocked(dump *engine.Snapshot) {
	h.seq = dump.Seq
	h.nodes = make(map[engine.ID]*mnode, len(dump.Nodes))
	h.sessions = make(map[engine.ID]struct{}, len(dump.Sessions))
	h.created = make(map[engine.ID]map[engine.ID]struct{})
	h.byNode = make(map[engine.ID]map[*watcher]struct{})
	h.mine = make(map[engine.ID]map[*watcher]struct{})
	h.bySession = make(map[engine.ID]map[*watcher]struct{})
	h.usage.load(dump)
	for _, r := range dump.Nodes {
		n := &mnode{id: r.ID, name: r.Name, state: r.State, changed: r.Created}
		if r.State != engine.Active {
			n.changed, n.byOwner = r.Ended, r.OwnerEnded
		}
		h.nodes[r.ID] = n
	}
	for _, r := range dump.Nodes {
		if p := h.nodes[r.Parent]; p != nil && r.Parent != 0 {
			h.link(h.nodes[r.ID], p)
		}
	}
	for _, n := range h.nodes {
		if n.state == engine.Active {
			n.countAbove(1)
		}
	}
	for _, r := range dump.Sessions {
		h.sessions[r.ID] = struct{}{}
	}
}

// countAbove adds d to the count of active nodes beneath each of n's
// ancestors: at most engine.MaxDepth of them.
func (n *mnode) countAbove(d int) {
	for a := n.parent; a != nil; a = a.parent {
		a.activeBelow += d
	}
}

func (h *hub) link(n, p *mnode) {
	n.parent = p
	if p.children == nil {
		p.children = make(map[engine.ID]*mnode)
	}
	p.children[n.id] = n
}

// name returns a node's name, or "" if the hub does not hold it.
func (h *hub) name(id engine.ID) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := h.nodes[id]; n != nil {
		return n.name
	}
	return ""
}

// tenant returns the name of the tenant whose subtree holds node id: the
// root's child on its path. "" for the root, or a node the hub does not
// hold.
func (h *hub) tenant(id engine.ID) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.nodes[id]
	for n != nil && n.parent != nil && n.parent.id != engine.RootID {
		n = n.parent
	}
	if n == nil || n.id == engine.RootID {
		return ""
	}
	return n.name
}

func (n *mnode) message() *governorv1.WatchNodeResponse {
	m := &governorv1.WatchNodeResponse{
		NodeId: uint64(n.id), Name: n.name, State: wireState(n.state),
		EndedReason: n.reason(), ChangedAt: stamp(n.changed),
	}
	if n.parent != nil {
		m.ParentId = uint64(n.parent.id)
	}
	return m
}

// publish applies committed events to the mirror and tells the watchers.
// An event the hub has seen is skipped. A gap means events were not
// published: the hub reloads from the engine and closes every watcher,
// since they missed changes.
func (h *hub) publish(evs []*engine.Event, eng *engine.Engine) {
	h.mu.Lock()
	defer h.mu.Unlock()
	moved := false
	for _, ev := range evs {
		if ev.Seq <= h.seq {
			continue
		}
		if ev.Seq != h.seq+1 {
			h.log.Error("watch streams missed committed events; reloading the tree and closing every watch", "have", h.seq, "got", ev.Seq)
			h.resyncLocked(eng.Dump())
			moved = true
			continue
		}
		h.applyLocked(ev)
		h.seq, moved = ev.Seq, true
	}
	if moved && h.advanced != nil {
		close(h.advanced)
		h.advanced = nil
	}
}

// reload replaces the mirror with the state of a dump and closes every
// watcher, as a gap in the events does.
func (h *hub) reload(dump *engine.Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resyncLocked(dump)
	if h.advanced != nil {
		close(h.advanced)
		h.advanced = nil
	}
}

func (h *hub) resyncLocked(dump *engine.Snapshot) {
	lost := unavailable("This watch missed changes and was closed; watch again to get the current state.")
	for _, ws := range h.bySession {
		for w := range ws {
			h.dropLocked(w, lost)
		}
	}
	h.loadLocked(dump)
}

func (h *hub) applyLocked(ev *engine.Event) {
	h.usageLocked(ev)
	switch ev.Kind {
	case engine.KindNodeCreated:
		h.createdLocked(ev)
	case engine.KindNodeEnded, engine.KindNodeEnding:
		if n := h.nodes[ev.Node]; n != nil && n.state == engine.Active {
			n.byOwner = ev.Owner != 0
			if ev.Kind == engine.KindNodeEnding {
				h.endOneLocked(n, ev.State, ev.Time, nil) // the nodes_ended steps that follow end the rest
			} else {
				h.endLocked(n, ev.State, ev.Time, nil)
			}
		}
	case engine.KindNodesEnded:
		for _, id := range ev.IDs {
			if n := h.nodes[id]; n != nil && n.state == engine.Active && n.parent != nil {
				h.endStepLocked(n)
			}
		}
	case engine.KindNodesRemoved, engine.KindKeysForgotten:
		for _, id := range ev.IDs {
			if n := h.nodes[id]; n != nil {
				h.removeLocked(n)
			}
		}
	case engine.KindSessionOpened:
		h.sessions[ev.Target] = struct{}{}
	case engine.KindSessionClosed, engine.KindSessionExpired:
		h.sessionEndedLocked(ev.Target)
	}
}

func (h *hub) createdLocked(ev *engine.Event) {
	n := &mnode{id: ev.Target, name: ev.Spec.Name, creator: ev.Session, state: engine.Active, changed: ev.Time}
	h.nodes[n.id] = n
	if p := h.nodes[ev.Node]; p != nil {
		h.link(n, p)
		n.countAbove(1)
	}
	if n.creator != 0 {
		set := h.created[n.creator]
		if set == nil {
			set = make(map[engine.ID]struct{})
			h.created[n.creator] = set
		}
		set[n.id] = struct{}{}
	}
	h.deliverLocked(n)
}

// endLocked ends n and its active subtree, children first, so that a
// subtree watcher hears of every node before the stream ends with its own.
// cause is the node whose end ended n (nil for n itself); it has ended
// already, so that the words for why n ended can name how.
func (h *hub) endLocked(n *mnode, st engine.State, at int64, cause *mnode) {
	n.state, n.changed, n.cause = st, at, cause
	below := engine.Cancelled
	if st == engine.DeadlineExceeded {
		below = engine.DeadlineExceeded
	}
	top := cause
	if top == nil {
		top = n
	}
	for _, ch := range n.children {
		if ch.state == engine.Active {
			h.endLocked(ch, below, at, top)
		}
	}
	h.tellEndLocked(n)
}

// reason says in words why n ended, naming the ancestor whose end ended it;
// "" while active.
func (n *mnode) reason() string {
	c := n.cause
	switch {
	case c == nil:
		return endedReason(n.state, n.byOwner)
	case c.byOwner:
		return fmt.Sprintf("%s: its ancestor %q (node %d) ended with its owner's session", endedReason(n.state, false), c.name, c.id)
	default:
		return fmt.Sprintf("%s: its ancestor %q (node %d) was %s", endedReason(n.state, false), c.name, c.id, endedReason(c.state, false))
	}
}

// endOneLocked ends n alone, as endLocked does.
func (h *hub) endOneLocked(n *mnode, st engine.State, at int64, cause *mnode) {
	n.state, n.changed, n.cause = st, at, cause
	h.tellEndLocked(n)
}

// tellEndLocked takes the ended node n off the count of active nodes
// beneath each of its ancestors, then tells its watchers, so that a subtree
// watcher above hears its own node's end after n's.
func (h *hub) tellEndLocked(n *mnode) {
	n.countAbove(-1)
	h.deliverLocked(n)
}

// A node_ending's subtree ends here a nodes_ended step at a time, as the
// record ends it, so that the writer goroutine, which publishes, never walks
// a wide subtree at once: the node ends alone, and each node of a step
// after it, whoever watches. A watcher of a subtree must hear of every node
// in it before its stream ends with the node's own end, which the steps,
// parents first, do not give: the node's end is held back from it until no
// active node is left beneath (mnode.activeBelow), and then closes its stream.

// endStepLocked ends n, a node of a nodes_ended step, alone, as its ended
// parent makes it, naming as the cause the topmost ended node above it.
func (h *hub) endStepLocked(n *mnode) {
	top := n.parent
	for top.parent != nil && top.parent.state != engine.Active {
		top = top.parent
	}
	st := engine.Cancelled
	if n.parent.state == engine.DeadlineExceeded {
		st = engine.DeadlineExceeded
	}
	h.endOneLocked(n, st, n.parent.changed, top)
}

func (h *hub) removeLocked(n *mnode) {
	for _, ch := range n.children {
		h.removeLocked(ch)
	}
	if n.state == engine.Active { // a forgotten key node
		n.countAbove(-1)
	}
	if n.parent != nil {
		delete(n.parent.children, n.id)
	}
	if set := h.created[n.creator]; set != nil {
		delete(set, n.id)
	}
	delete(h.nodes, n.id)
}

func (h *hub) sessionEndedLocked(id engine.ID) {
	delete(h.sessions, id)
	delete(h.created, id)
	for w := range h.bySession[id] {
		h.dropLocked(w, unauthenticated(msgSession))
	}
}

// deliverLocked tells every watcher that follows n of its new state: those
// of n itself, of an ancestor's subtree, and of the sessions that created n
// or an ancestor. The message is built only once a watcher wants it. A
// subtree watcher of an ended node hears its end, the last note, once no
// active node is left beneath it: at once, or after the change of the last
// one. It looks at n's ancestors only.
func (h *hub) deliverLocked(n *mnode) {
	h.round++
	var msg *governorv1.WatchNodeResponse
	for a := n; a != nil; a = a.parent {
		for w := range h.byNode[a.id] {
			if a != n && !w.subtree || w.round == h.round {
				continue
			}
			w.round = h.round
			if a != n || !w.subtree || n.state == engine.Active || n.activeBelow == 0 {
				if msg == nil {
					msg = n.message()
				}
				h.sendLocked(w, note{msg: msg, last: a == n && n.state != engine.Active})
			}
			if _, open := h.byNode[a.id][w]; open && a != n && a.state != engine.Active && a.activeBelow == 0 {
				h.sendLocked(w, note{msg: a.message(), last: true})
			}
		}
		for w := range h.mine[a.creator] {
			if w.round != h.round {
				w.round = h.round
				if msg == nil {
					msg = n.message()
				}
				h.sendLocked(w, note{msg: msg})
			}
		}
	}
}

// sendLocked hands w a note without blocking. A watcher whose buffer is
// full is closed: it fell behind.
func (h *hub) sendLocked(w *watcher, nt note) {
	select {
	case w.ch <- nt:
		if nt.last {
			h.unregisterLocked(w)
		}
	default:
		h.dropLocked(w, fellBehind())
	}
}

// fellBehind is why a watcher that fell behind is closed.
func fellBehind() error {
	return unavailable(fmt.Sprintf(
		"This watch fell %d changes behind and was closed; watch again to get the current state.", watchBuffer))
}

func (h *hub) registerLocked(w *watcher) {
	put(h.bySession, w.session, w)
	if w.node == 0 {
		put(h.mine, w.session, w)
	} else {
		put(h.byNode, w.node, w)
	}
	if w.usage {
		put(h.usage.watchers, w.node, w)
	}
}

func (h *hub) unregisterLocked(w *watcher) {
	del(h.bySession, w.session, w)
	if w.node == 0 {
		del(h.mine, w.session, w)
	} else {
		del(h.byNode, w.node, w)
	}
	if w.usage {
		del(h.usage.watchers, w.node, w)
	}
}

// dropLocked closes w with err.
func (h *hub) dropLocked(w *watcher, err error) {
	h.unregisterLocked(w)
	w.err = err
	close(w.gone)
}

// unwatch removes a watcher whose stream ended on its own side.
func (h *hub) unwatch(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-w.gone:
	default:
		h.unregisterLocked(w)
	}
}

// watch registers a watcher once the hub has applied every event up to seq,
// the point at which the caller's engine call was answered, and returns the
// current state it starts with. A watcher whose node has ended is not
// registered: its first notes are its last.
func (h *hub) watch(ctx context.Context, stop <-chan struct{}, seq uint64, w *watcher) ([]note, error) {
	for {
		h.mu.Lock()
		if h.seq >= seq {
			notes, err := h.startLocked(w)
			h.mu.Unlock()
			return notes, err
		}
		if h.advanced == nil {
			h.advanced = make(chan struct{})
		}
		advanced := h.advanced
		h.mu.Unlock()
		select {
		case <-advanced:
		case <-ctx.Done():
			return nil, toConnect(ctx.Err())
		case <-stop:
			return nil, unavailable(msgStopping)
		}
	}
}

func (h *hub) startLocked(w *watcher) ([]note, error) {
	if _, ok := h.sessions[w.session]; !ok {
		return nil, unauthenticated(msgSession)
	}
	w.ch, w.gone = make(chan note, watchBuffer), make(chan struct{})
	if w.usage {
		w.dirty, w.poke = make(map[engine.ID]struct{}), make(chan struct{}, 1)
	}
	if w.node == 0 {
		ids := slices.Sorted(maps.Keys(h.created[w.session]))
		notes := make([]note, 0, len(ids))
		for _, id := range ids {
			notes = append(notes, note{msg: h.nodes[id].message()})
		}
		h.registerLocked(w)
		return notes, nil
	}
	n := h.nodes[w.node]
	if n == nil {
		return nil, connect.NewError(connect.CodeNotFound, errors.New(msgNotFound))
	}
	if n.state != engine.Active {
		return []note{{msg: n.message(), last: true}}, nil
	}
	h.registerLocked(w)
	return []note{{msg: n.message()}}, nil
}
