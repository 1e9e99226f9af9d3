package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Acquire waits in the fair queue for one slot of a class on a node's whole
// chain. A caller that gives up, even at the instant of its grant, leaks
// nothing: the waiter is withdrawn or the grant released.
func (s *Server) Acquire(ctx context.Context, req *connect.Request[governorv1.AcquireRequest]) (*connect.Response[governorv1.AcquireResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	hold, err := checkAcquire(m.NodeId, m.Class, m.MaxHold, m.RequestId)
	if err != nil {
		return nil, err
	}
	return reply(once(ctx, s, p, m.RequestId, "Acquire", m, func() (*governorv1.AcquireResponse, error) {
		lease, err := s.acquire(ctx, p, engine.ID(m.NodeId), m.Class, hold, m.RequestId)
		if err != nil {
			return nil, err
		}
		return &governorv1.AcquireResponse{Lease: wireLease(lease)}, nil
	}))
}

func (s *Server) acquire(ctx context.Context, p principal, id engine.ID, class string, hold time.Duration, reqID string) (engine.LeaseInfo, error) {
	if err := s.room(ctx); err != nil {
		return engine.LeaseInfo{}, err
	}
	if err := s.inTimeToRecord(ctx); err != nil {
		return engine.LeaseInfo{}, err
	}
	c := &engine.Call{Session: p.session, Request: reqID}
	lease, w, err := s.store.Acquire(c, id, class, hold)
	seq, granted := c.Seq, time.Now()
	if w != nil {
		q := queueSpan(ctx)
		select {
		case g := <-w.C():
			endQueueSpan(q, g.Err == nil)
			lease, err, seq, granted = g.Lease, g.Err, max(seq, g.Seq), time.Now()
		case <-ctx.Done():
			endQueueSpan(q, false)
			_ = s.store.Abandon(&engine.Call{}, w)
			return engine.LeaseInfo{}, toConnect(ctx.Err())
		case <-s.closing:
			endQueueSpan(q, false)
			_ = s.store.Abandon(&engine.Call{}, w)
			return engine.LeaseInfo{}, unavailable(msgStopping)
		}
	}
	noteAcquire(ctx, p.node(id), class, w != nil, err)
	return s.answerGrant(ctx, p, lease, w, seq, granted, err)
}

// answerGrant waits for the record to hold an acquire's outcome (up to
// seq) and answers it. A lease whose caller has gone by then is given back
// (giveBack) instead of answered, so no lease is held for a caller who never
// learnt of it; a grant answered notes how long it took to be recorded.
func (s *Server) answerGrant(ctx context.Context, p principal, lease engine.LeaseInfo, w *engine.Waiter, seq uint64, granted time.Time, err error) (engine.LeaseInfo, error) {
	werr := s.settle(ctx, seq, err)
	if err == nil && ctx.Err() != nil {
		s.giveBack(p, lease, w)
		return engine.LeaseInfo{}, toConnect(ctx.Err())
	}
	if werr != nil {
		return engine.LeaseInfo{}, werr
	}
	if err == nil {
		s.floor.note(time.Since(granted))
	}
	return lease, nil
}

// inTimeToRecord refuses an acquire whose caller has given up, or gives up
// sooner than the fastest recent grant took to be recorded: its lease would
// be lost before it is recorded, and its grant and the release that gives
// the slot back would be written for nothing.
func (s *Server) inTimeToRecord(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return toConnect(err)
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < s.floor.get() {
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New(msgTooShort))
	}
	return nil
}

// giveBack releases a lease granted to a caller who stopped waiting before
// it could be answered, whether or not the grant was on record yet, so
// that the slot goes to the next waiter. The release is an event like any
// other, so replay agrees.
func (s *Server) giveBack(p principal, lease engine.LeaseInfo, w *engine.Waiter) {
	if w != nil {
		_ = s.store.Abandon(&engine.Call{}, w)
		return
	}
	_, _ = s.store.Release(&engine.Call{Session: p.session}, lease.ID, engine.Report{})
}

var releaseOutcomes = map[engine.Outcome]governorv1.ReleaseOutcome{
	engine.OutcomeReleased:        governorv1.ReleaseOutcome_RELEASE_OUTCOME_RELEASED,
	engine.OutcomeAlreadyReleased: governorv1.ReleaseOutcome_RELEASE_OUTCOME_ALREADY_RELEASED,
}

// Release gives back a lease the caller's session holds, with a report on
// the downstream for the adaptive controller.
func (s *Server) Release(ctx context.Context, req *connect.Request[governorv1.ReleaseRequest]) (*connect.Response[governorv1.ReleaseResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkLease(m.LeaseId); err != nil {
		return nil, err
	}
	latency, err := checkDuration("latency", m.Latency, 0, math.MaxInt64, "must be 0 or more, or unset when not measured")
	if err != nil {
		return nil, err
	}
	if err := checkRequestID(m.RequestId); err != nil {
		return nil, err
	}
	rep := engine.Report{LatencyNanos: int64(latency), Overloaded: m.Overloaded}
	return reply(once(ctx, s, p, m.RequestId, "Release", m, func() (*governorv1.ReleaseResponse, error) {
		if err := s.room(ctx); err != nil {
			return nil, err
		}
		c := &engine.Call{Session: p.session, Request: m.RequestId}
		out, err := s.store.Release(c, engine.ID(m.LeaseId), rep)
		if err := s.settle(ctx, c.Seq, err); err != nil {
			return nil, err
		}
		return &governorv1.ReleaseResponse{Outcome: releaseOutcomes[out]}, nil
	}))
}

// Validate reports whether a lease is live now. An ended lease is an
// answer, not an error: the response says how it ended. It takes an API
// key too.
func (s *Server) Validate(ctx context.Context, req *connect.Request[governorv1.ValidateRequest]) (*connect.Response[governorv1.ValidateResponse], error) {
	p, err := s.sessionOrKey(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkLease(m.LeaseId); err != nil {
		return nil, err
	}
	if err := s.room(ctx); err != nil {
		return nil, err
	}
	c := &engine.Call{Session: p.session}
	lease, err := s.store.Validate(c, engine.ID(m.LeaseId))
	var ended *engine.LeaseError
	if errors.As(err, &ended) {
		if o, ok := leaseOutcomes[ended.Outcome]; ok {
			if err := s.settle(ctx, c.Seq, nil); err != nil {
				return nil, err
			}
			return connect.NewResponse(&governorv1.ValidateResponse{
				State: o.state, Reason: fmt.Sprintf("Lease %d %s.", ended.Lease, o.why),
			}), nil
		}
	}
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return nil, err
	}
	return connect.NewResponse(&governorv1.ValidateResponse{
		Valid: true, Lease: wireLease(lease), State: governorv1.LeaseState_LEASE_STATE_HELD,
	}), nil
}
