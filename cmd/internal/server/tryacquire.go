package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TryAcquire takes one slot of a class on a node's whole chain if one is
// free now, and otherwise refuses at once with ResourceExhausted instead of
// queueing. It shares Acquire's request ids: an id remembered with the same
// node, class and max hold answers with that lease.
func (s *Server) TryAcquire(ctx context.Context, req *connect.Request[governorv1.TryAcquireRequest]) (*connect.Response[governorv1.TryAcquireResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	hold, err := checkAcquire(m.NodeId, m.Class, m.MaxHold, m.RequestId)
	if err != nil {
		return nil, err
	}
	return reply(once(ctx, s, p, m.RequestId, "TryAcquire", m, func() (*governorv1.TryAcquireResponse, error) {
		lease, err := s.tryAcquire(ctx, p, engine.ID(m.NodeId), m.Class, hold, m.RequestId)
		if err != nil {
			return nil, err
		}
		return &governorv1.TryAcquireResponse{Lease: wireLease(lease)}, nil
	}))
}

// tryAcquire grants a lease that fits now, or says that no slot is free: one
// engine step that queues nothing, so no release can grant a lease between
// the refusal and its withdrawal.
func (s *Server) tryAcquire(ctx context.Context, p principal, id engine.ID, class string, hold time.Duration, reqID string) (engine.LeaseInfo, error) {
	if err := s.room(ctx); err != nil {
		return engine.LeaseInfo{}, err
	}
	c := &engine.Call{Session: p.session, Request: reqID}
	lease, err := s.store.TryAcquire(c, id, class, hold)
	granted := time.Now()
	if errors.Is(err, engine.ErrNoSlot) {
		refusedNow(ctx, p.node(id), class)
		if err := s.settle(ctx, c.Seq, nil); err != nil {
			return engine.LeaseInfo{}, err
		}
		return engine.LeaseInfo{}, connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
			"No %s slot is free now on node %d's chain: every slot of the class is held. Acquire waits for one; TryAcquire does not.", class, p.node(id)))
	}
	noteAcquire(ctx, p.node(id), class, false, err)
	return s.answerGrant(ctx, p, lease, nil, c.Seq, granted, err)
}

// checkAcquire checks the fields of an Acquire or a TryAcquire and returns
// its maximum hold.
func checkAcquire(node uint64, class string, maxHold *durationpb.Duration, reqID string) (time.Duration, error) {
	if err := checkNode("node_id", node); err != nil {
		return 0, err
	}
	if err := checkKey("class", class); err != nil {
		return 0, err
	}
	hold, err := checkDuration("max_hold", maxHold, time.Nanosecond, engine.MaxSpan,
		"must be positive and at most 366 days, or unset to hold the lease as long as the session and the node live")
	if err != nil {
		return 0, err
	}
	return hold, checkRequestID(reqID)
}
