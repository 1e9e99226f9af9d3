package server

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// WatchNode streams the committed state changes of a node, of its subtree,
// or of every node the caller's session created. It starts with the current
// state and ends after the watched node ends (or, for created_by_session,
// when the session ends). On a cluster member it is served by the leader
// only, and ends with Unavailable once the member stops leading: the new
// leader has the same state, where the watch starts again.
func (s *Server) WatchNode(ctx context.Context, req *connect.Request[governorv1.WatchNodeRequest], stream *connect.ServerStream[governorv1.WatchNodeResponse]) error {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return err
	}
	m := req.Msg
	if err := checkNode("node_id", m.NodeId); err != nil {
		return err
	}
	if m.CreatedBySession && (m.NodeId != 0 || m.Subtree) {
		return badField("created_by_session", "watches the session's own nodes: node_id must be 0 and subtree false with it")
	}
	if m.Usage && m.CreatedBySession {
		return badField("usage", "reports the use of a watched node or subtree; it does not go with created_by_session")
	}
	if err := s.room(ctx); err != nil {
		return err
	}
	local := s.store.Local() // a replica's changes when a snapshot replaces it
	slot, err := local.HoldWatch(&engine.Call{Session: p.session})
	if err != nil {
		return toConnect(err)
	}
	defer local.FreeWatch(slot)
	lost, unobserve := s.observeLeading()
	defer unobserve()
	c := &engine.Call{Session: p.session}
	inf, _, _, err := s.store.Describe(c, engine.ID(m.NodeId), nil)
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return err
	}
	w := &watcher{session: p.session, node: inf.ID, subtree: m.Subtree, usage: m.Usage}
	if m.CreatedBySession {
		w.node = 0
	}
	first, err := s.hub.watch(ctx, s.closing, c.Seq, w)
	if err != nil {
		return err
	}
	defer s.hub.unwatch(w)
	for _, nt := range first {
		if err := stream.Send(nt.msg); err != nil || nt.last {
			return err
		}
	}
	return s.follow(ctx, w, stream, lost)
}

// follow sends a watcher's notes until its last, until the hub closes it,
// until the caller or the server stops, or until this member stops leading
// its cluster (lost; nil outside a cluster). A usage watcher's changes of use
// are sent in batches at most every usageEvery.
func (s *Server) follow(ctx context.Context, w *watcher, stream *connect.ServerStream[governorv1.WatchNodeResponse], lost <-chan raft.Observation) error {
	poke := w.poke
	var pause <-chan time.Time
	for {
		select {
		case nt := <-w.ch:
			if err := stream.Send(nt.msg); err != nil || nt.last {
				return err
			}
		case <-poke:
			if err := s.sendUsage(ctx, w, stream); err != nil {
				return err
			}
			poke, pause = nil, time.After(usageEvery)
		case <-pause:
			poke, pause = w.poke, nil
		case <-w.gone:
			return s.drain(w, stream)
		case <-ctx.Done():
			return toConnect(ctx.Err())
		case <-s.closing:
			return unavailable(msgStopping)
		case <-lost:
			return unavailable(msgLeaderLost)
		}
	}
}

// drain sends what a closed watcher still holds, then why it was closed.
func (s *Server) drain(w *watcher, stream *connect.ServerStream[governorv1.WatchNodeResponse]) error {
	for {
		select {
		case nt := <-w.ch:
			if err := stream.Send(nt.msg); err != nil {
				return err
			}
		default:
			return w.err
		}
	}
}
