package server

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// described answers a change to node id with the node as it is after the
// change, once both are on record. A refused change answers its error.
func (s *Server) described(ctx context.Context, p principal, id engine.ID, c *engine.Call, err error) (*governorv1.NodeInfo, error) {
	if err != nil {
		return nil, s.settle(ctx, c.Seq, err)
	}
	d := &engine.Call{Session: p.session}
	inf, _, _, err := s.store.Describe(d, id, nil)
	if err := s.settle(ctx, max(c.Seq, d.Seq), err); err != nil {
		return nil, err
	}
	return s.nodeInfo(inf), nil
}

// change runs one edit of node id for a session: the checks every edit
// shares, the request id, and the node after the change.
func (s *Server) change(ctx context.Context, p principal, method string, m proto.Message, nodeID uint64, reqID string,
	edit func(c *engine.Call, id engine.ID) error) (*governorv1.NodeInfo, error) {
	if err := checkNode("node_id", nodeID); err != nil {
		return nil, err
	}
	if err := checkRequestID(reqID); err != nil {
		return nil, err
	}
	id := engine.ID(nodeID)
	return once(ctx, s, p, reqID, method, m, func() (*governorv1.NodeInfo, error) {
		if err := s.room(ctx); err != nil {
			return nil, err
		}
		c := &engine.Call{Session: p.session, Request: reqID}
		return s.described(ctx, p, id, c, edit(c, id))
	})
}

// SetQuota sets or removes a node's cap on a resource.
func (s *Server) SetQuota(ctx context.Context, req *connect.Request[governorv1.SetQuotaRequest]) (*connect.Response[governorv1.SetQuotaResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkKey("resource", m.Resource); err != nil {
		return nil, err
	}
	value, err := checkValue(m.Value)
	if err != nil {
		return nil, err
	}
	info, err := s.change(ctx, p, "SetQuota", m, m.NodeId, m.RequestId, func(c *engine.Call, id engine.ID) error {
		return s.store.SetQuota(c, id, m.Resource, value)
	})
	return reply(&governorv1.SetQuotaResponse{Node: info}, err)
}

// SetLimit sets or removes a node's concurrency limit on a class.
func (s *Server) SetLimit(ctx context.Context, req *connect.Request[governorv1.SetLimitRequest]) (*connect.Response[governorv1.SetLimitResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkKey("class", m.Class); err != nil {
		return nil, err
	}
	value, err := checkValue(m.Value)
	if err != nil {
		return nil, err
	}
	info, err := s.change(ctx, p, "SetLimit", m, m.NodeId, m.RequestId, func(c *engine.Call, id engine.ID) error {
		return s.store.SetLimit(c, id, m.Class, value)
	})
	return reply(&governorv1.SetLimitResponse{Node: info}, err)
}

// SetDefaults replaces what a node's new children start with.
func (s *Server) SetDefaults(ctx context.Context, req *connect.Request[governorv1.SetDefaultsRequest]) (*connect.Response[governorv1.SetDefaultsResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	d, err := checkDefaults(m.Defaults)
	if err != nil {
		return nil, err
	}
	info, err := s.change(ctx, p, "SetDefaults", m, m.NodeId, m.RequestId, func(c *engine.Call, id engine.ID) error {
		return s.store.SetDefaults(c, id, d)
	})
	return reply(&governorv1.SetDefaultsResponse{Node: info}, err)
}
