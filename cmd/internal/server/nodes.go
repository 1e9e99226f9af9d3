package server

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// reply wraps a handler's answer.
func reply[T any](res *T, err error) (*connect.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(res), nil
}

// CreateNode creates a child under a node in the caller's scope.
func (s *Server) CreateNode(ctx context.Context, req *connect.Request[governorv1.CreateNodeRequest]) (*connect.Response[governorv1.CreateNodeResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkNode("parent_id", m.ParentId); err != nil {
		return nil, err
	}
	if m.Spec == nil {
		return nil, badField("spec", "is required: the new node's spec, with at least its name")
	}
	spec, err := checkSpec("spec", m.Spec, m.Spec.Name, "spec.name")
	if err != nil {
		return nil, err
	}
	if err := checkRequestID(m.RequestId); err != nil {
		return nil, err
	}
	return reply(once(ctx, s, p, m.RequestId, "CreateNode", m, func() (*governorv1.CreateNodeResponse, error) {
		if err := s.room(ctx); err != nil {
			return nil, err
		}
		c := &engine.Call{Session: p.session, Request: m.RequestId}
		inf, err := s.store.Create(c, engine.ID(m.ParentId), spec)
		if err := s.settle(ctx, c.Seq, err); err != nil {
			return nil, err
		}
		return &governorv1.CreateNodeResponse{Node: s.nodeInfo(inf)}, nil
	}))
}

// EnsureNode finds the newest child of a name or creates it, optionally
// charging the parent's chain in the same step. It takes an API key too.
func (s *Server) EnsureNode(ctx context.Context, req *connect.Request[governorv1.EnsureNodeRequest]) (*connect.Response[governorv1.EnsureNodeResponse], error) {
	p, err := s.sessionOrKey(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkNode("parent_id", m.ParentId); err != nil {
		return nil, err
	}
	spec, err := checkSpec("spec", m.Spec, m.Name, "name")
	if err != nil {
		return nil, err
	}
	var charge *engine.Charge
	if m.Charge != nil {
		if err := checkKey("charge.resource", m.Charge.Resource); err != nil {
			return nil, err
		}
		if err := checkAmount("charge.amount", m.Charge.Amount); err != nil {
			return nil, err
		}
		charge = &engine.Charge{Resource: m.Charge.Resource, Amount: m.Charge.Amount}
	}
	if err := checkRequestID(m.RequestId); err != nil {
		return nil, err
	}
	return reply(once(ctx, s, p, m.RequestId, "EnsureNode", m, func() (*governorv1.EnsureNodeResponse, error) {
		if err := s.room(ctx); err != nil {
			return nil, err
		}
		c := &engine.Call{Session: p.session, Request: m.RequestId}
		inf, created, err := s.store.Ensure(c, engine.ID(m.ParentId), spec, charge)
		if err := s.settle(ctx, c.Seq, err); err != nil {
			return nil, err
		}
		return &governorv1.EnsureNodeResponse{Node: s.nodeInfo(inf), Created: created}, nil
	}))
}

// GetNode describes a node and, if asked, one page of its children.
func (s *Server) GetNode(ctx context.Context, req *connect.Request[governorv1.GetNodeRequest]) (*connect.Response[governorv1.GetNodeResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkNode("node_id", m.NodeId); err != nil {
		return nil, err
	}
	if err := s.room(ctx); err != nil {
		return nil, err
	}
	var page *engine.Page
	if m.IncludeChildren {
		page = &engine.Page{After: engine.ID(m.Cursor), Size: int(min(m.PageSize, engine.MaxPageSize+1)), Into: s.pages.take()}
	}
	c := &engine.Call{Session: p.session}
	inf, kids, next, err := s.store.Describe(c, engine.ID(m.NodeId), page)
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return nil, err
	}
	out := &governorv1.GetNodeResponse{Node: s.nodeInfo(inf), NextCursor: uint64(next)}
	if len(kids) > 0 {
		out.Children = s.wireChildren(ctx, kids)
	}
	s.giveEngine(kids)
	return connect.NewResponse(out), nil
}

// CancelNode ends a node and its subtree as cancelled.
func (s *Server) CancelNode(ctx context.Context, req *connect.Request[governorv1.CancelNodeRequest]) (*connect.Response[governorv1.CancelNodeResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if len(m.Reason) > maxReasonLen {
		return nil, badField("reason", fmt.Sprintf("must be at most %d bytes", maxReasonLen))
	}
	info, err := s.change(ctx, p, "CancelNode", m, m.NodeId, m.RequestId, s.store.Cancel)
	if err != nil {
		return nil, err
	}
	s.log.Info("node cancelled", "node", info.Id, "name", info.Name, "reason", m.Reason)
	return connect.NewResponse(&governorv1.CancelNodeResponse{Node: info}), nil
}

// CloseNode ends a node as done; active nodes beneath it are cancelled.
func (s *Server) CloseNode(ctx context.Context, req *connect.Request[governorv1.CloseNodeRequest]) (*connect.Response[governorv1.CloseNodeResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	info, err := s.change(ctx, p, "CloseNode", m, m.NodeId, m.RequestId, s.store.Close)
	return reply(&governorv1.CloseNodeResponse{Node: info}, err)
}
