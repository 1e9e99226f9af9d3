package server

import (
	"context"
	"maps"
	"slices"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// usageEvery is the shortest time between two batches of usage messages to
// one watcher: the changes of that time go together.
const usageEvery = 100 * time.Millisecond

// usageMirror lets the hub say which nodes' use an event changed. It
// mirrors the live leases, since a lease that expires or whose session ends
// is named by no node in its event. Guarded by hub.mu.
type usageMirror struct {
	leases   map[engine.ID]leaseRef               // live lease to its node and session
	bySess   map[engine.ID]map[engine.ID]struct{} // session to its live leases
	byNode   map[engine.ID]map[engine.ID]struct{} // node to the live leases acquired on it
	watchers map[engine.ID]map[*watcher]struct{}  // usage watchers by watched node
}

type leaseRef struct{ node, session engine.ID }

func (u *usageMirror) load(dump *engine.Snapshot) {
	u.leases = make(map[engine.ID]leaseRef, len(dump.Leases))
	u.bySess = make(map[engine.ID]map[engine.ID]struct{})
	u.byNode = make(map[engine.ID]map[engine.ID]struct{})
	u.watchers = make(map[engine.ID]map[*watcher]struct{})
	for _, l := range dump.Leases {
		u.add(l.ID, leaseRef{node: l.Node, session: l.Session})
	}
}

func (u *usageMirror) add(id engine.ID, r leaseRef) {
	u.leases[id] = r
	put(u.bySess, r.session, id)
	put(u.byNode, r.node, id)
}

// drop forgets a lease and returns its node; 0 if it was not live.
func (u *usageMirror) drop(id engine.ID) engine.ID {
	r, ok := u.leases[id]
	if !ok {
		return 0
	}
	delete(u.leases, id)
	del(u.bySess, r.session, id)
	del(u.byNode, r.node, id)
	return r.node
}

// put adds v to the set m[k], making the set if need be.
func put[K, V comparable](m map[K]map[V]struct{}, k K, v V) {
	if m[k] == nil {
		m[k] = make(map[V]struct{})
	}
	m[k][v] = struct{}{}
}

// del removes v from the set m[k], and the set once it is empty.
func del[K, V comparable](m map[K]map[V]struct{}, k K, v V) {
	delete(m[k], v)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}

// usageLocked marks, for every usage watcher that follows them, the nodes
// whose use ev changes. It runs before the hub applies ev to its mirror of
// the tree, so that removed nodes are still there to find their parents.
func (h *hub) usageLocked(ev *engine.Event) {
	u := &h.usage
	switch ev.Kind {
	case engine.KindConsumed, engine.KindQuotaSet, engine.KindLimitSet, engine.KindRateSet,
		engine.KindRateReset, engine.KindRateDrained, engine.KindDefaultsSet, engine.KindNodeCreated:
		h.changedLocked(ev.Node)
	case engine.KindLeaseGranted:
		u.add(ev.Target, leaseRef{node: ev.Node, session: ev.Session})
		h.changedLocked(ev.Node)
	case engine.KindLeaseReleased, engine.KindLeaseExpired:
		h.changedLocked(u.drop(ev.Target))
	case engine.KindSessionClosed, engine.KindSessionExpired:
		for id := range u.bySess[ev.Target] { // drop may delete during range
			h.changedLocked(u.drop(id))
		}
	case engine.KindNodeEnded:
		if n := h.nodes[ev.Node]; n != nil {
			h.revokedLocked(n)
			h.changedLocked(ev.Node)
		}
	case engine.KindNodeEnding: // its subtree's leases end with the nodes_ended steps
		h.revokedOwnLocked(ev.Node)
	case engine.KindNodesEnded:
		for _, id := range ev.IDs {
			h.revokedOwnLocked(id)
		}
	case engine.KindNodesRemoved, engine.KindKeysForgotten:
		for _, id := range ev.IDs {
			if n := h.nodes[id]; n != nil && n.parent != nil {
				h.changedLocked(n.parent.id)
			}
		}
	}
}

// revokedLocked forgets the leases of n's subtree, which its end revokes.
func (h *hub) revokedLocked(n *mnode) {
	for id := range h.usage.byNode[n.id] {
		h.usage.drop(id)
	}
	for _, ch := range n.children {
		h.revokedLocked(ch)
	}
}

// revokedOwnLocked forgets the leases acquired on node id itself, which
// its end revokes, and marks it changed.
func (h *hub) revokedOwnLocked(id engine.ID) {
	for l := range h.usage.byNode[id] {
		h.usage.drop(l)
	}
	h.changedLocked(id)
}

// changedLocked marks node id and its ancestors changed for the usage
// watchers that follow them: a watcher of an ancestor a learns of every
// node from id up to a (with subtree), a watcher of id of id alone.
func (h *hub) changedLocked(id engine.ID) {
	if len(h.usage.watchers) == 0 {
		return
	}
	n := h.nodes[id]
	if n == nil {
		return
	}
	for a := n; a != nil; a = a.parent {
		for w := range h.usage.watchers[a.id] {
			if a != n && !w.subtree {
				continue
			}
			for p := n; p != a.parent; p = p.parent {
				w.dirty[p.id] = struct{}{}
			}
			h.pokeLocked(w)
		}
	}
}

// pokeLocked wakes w's stream; a watcher with more nodes changed than it
// may hold is closed, as one that fell behind.
func (h *hub) pokeLocked(w *watcher) {
	if len(w.dirty) > watchBuffer {
		h.dropLocked(w, fellBehind())
		return
	}
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// takeDirty returns the nodes whose use changed since the last call, by id.
func (h *hub) takeDirty(w *watcher) []engine.ID {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := slices.Sorted(maps.Keys(w.dirty))
	clear(w.dirty)
	return ids
}

// sendUsage sends the use of every node a usage watcher learnt changed,
// once the record holds what it reports. A node gone since is skipped.
func (s *Server) sendUsage(ctx context.Context, w *watcher, stream *connect.ServerStream[governorv1.WatchNodeResponse]) error {
	for _, id := range s.hub.takeDirty(w) {
		c := &engine.Call{Session: w.session}
		inf, _, _, err := s.store.Describe(c, id, nil)
		if err := s.settle(ctx, c.Seq, err); err != nil {
			if code := connect.CodeOf(err); code == connect.CodeNotFound || code == connect.CodePermissionDenied {
				continue
			}
			return err
		}
		msg := &governorv1.WatchNodeResponse{NodeId: uint64(inf.ID), ParentId: uint64(inf.Parent), Name: inf.Name,
			State: wireState(inf.State), EndedReason: endedReason(inf.State, inf.OwnerEnded), Usage: s.nodeInfo(inf)}
		if err := stream.Send(msg); err != nil {
			return err
		}
	}
	return nil
}
