package server

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Consume charges units of a resource to a node's whole chain, or refuses
// with the cap that refused. An amount of 0 is a peek. It takes an API key
// too.
func (s *Server) Consume(ctx context.Context, req *connect.Request[governorv1.ConsumeRequest]) (*connect.Response[governorv1.ConsumeResponse], error) {
	p, err := s.sessionOrKey(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	o, err := checkConsume(m)
	if err != nil {
		return nil, err
	}
	return reply(once(ctx, s, p, m.RequestId, "Consume", m, func() (*governorv1.ConsumeResponse, error) {
		if err := s.room(ctx); err != nil {
			return nil, err
		}
		c := &engine.Call{Session: p.session, Request: m.RequestId}
		res, err := s.store.ConsumeWith(c, engine.ID(m.NodeId), m.Resource, m.Amount, o)
		noteConsume(ctx, p.node(engine.ID(m.NodeId)), m.Resource, m.Amount, res, err)
		if err := s.settle(ctx, c.Seq, err); err != nil {
			return nil, err
		}
		out := consumeResponse(res)
		out.Charged = m.Amount
		return out, nil
	}))
}

// checkConsume checks a consume's fields and returns its options.
func checkConsume(m *governorv1.ConsumeRequest) (engine.ConsumeOptions, error) {
	var o engine.ConsumeOptions
	if err := checkNode("node_id", m.NodeId); err != nil {
		return o, err
	}
	if err := checkKey("resource", m.Resource); err != nil {
		return o, err
	}
	if m.Amount < 0 {
		return o, badField("amount", fmt.Sprintf("must be 0 (a peek) or more, got %d", m.Amount))
	}
	if err := checkRequestID(m.RequestId); err != nil {
		return o, err
	}
	wait, err := checkDuration("max_wait", m.MaxWait, 0, maxWait, "must be a duration of 0 (admit now or refuse) to 24h")
	if err != nil {
		return o, err
	}
	o = engine.ConsumeOptions{MaxWait: wait, Drain: m.DrainOverLimit}
	if m.Amount == 0 && o != (engine.ConsumeOptions{}) {
		return o, badField("amount", "must be 1 or more with max_wait or drain_over_limit: a peek (0) charges nothing")
	}
	return o, nil
}
