package server

import (
	"context"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Consume charges units of a resource to a node's whole chain, or refuses
// with the cap that is full. It takes an API key too.
func (s *Server) Consume(ctx context.Context, req *connect.Request[governorv1.ConsumeRequest]) (*connect.Response[governorv1.ConsumeResponse], error) {
	p, err := s.sessionOrKey(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkNode("node_id", m.NodeId); err != nil {
		return nil, err
	}
	if err := checkKey("resource", m.Resource); err != nil {
		return nil, err
	}
	if err := checkAmount("amount", m.Amount); err != nil {
		return nil, err
	}
	if err := checkRequestID(m.RequestId); err != nil {
		return nil, err
	}
	return reply(once(ctx, s, p, m.RequestId, "Consume", m, func() (*governorv1.ConsumeResponse, error) {
		if err := s.room(ctx); err != nil {
			return nil, err
		}
		c := &engine.Call{Session: p.session, Request: m.RequestId}
		err := s.eng.Consume(c, engine.ID(m.NodeId), m.Resource, m.Amount)
		seq := c.Seq
		var left *int64
		if err == nil {
			id := engine.ID(m.NodeId)
			if id == 0 {
				id = p.scope
			}
			left, seq = s.remaining(id, m.Resource, seq)
		}
		if err := s.settle(ctx, seq, err); err != nil {
			return nil, err
		}
		return &governorv1.ConsumeResponse{Remaining: left}, nil
	}))
}

// remaining returns the smallest headroom for resource on the chain from id
// to the root, read just after a charge, or nil if nothing on the chain caps
// it; and the sequence number the reading depends on. The chain above the
// caller's scope is read too: a denial names those caps as well.
func (s *Server) remaining(id engine.ID, resource string, seq uint64) (*int64, uint64) {
	var left *int64
	c := &engine.Call{}
	for id != 0 {
		inf, _, err := s.eng.Describe(c, id, false)
		seq = max(seq, c.Seq)
		if err != nil {
			break
		}
		if q, ok := inf.Quotas[resource]; ok && q.Capped {
			h := max(q.Cap-q.Used, 0)
			if left == nil || h < *left {
				left = &h
			}
		}
		id = inf.Parent
	}
	return left, seq
}
