package gubernator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/server"
	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// GetRateLimits answers each request in order.
func (s *Service) GetRateLimits(ctx context.Context, req *connect.Request[gubernatorv1.GetRateLimitsReq]) (*connect.Response[gubernatorv1.GetRateLimitsResp], error) {
	res, err := s.getRateLimits(ctx, callHeader{http: req.Header()}, req.Msg)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(res), nil
}

// HealthCheck says whether governord is serving. It needs no credential,
// as probes send none.
func (s *Service) HealthCheck(context.Context, *connect.Request[gubernatorv1.HealthCheckReq]) (*connect.Response[gubernatorv1.HealthCheckResp], error) {
	return connect.NewResponse(s.health()), nil
}

// getRateLimits authenticates the call, applies every request, and answers
// once everything the answers depend on is on record.
func (s *Service) getRateLimits(ctx context.Context, h callHeader, m *gubernatorv1.GetRateLimitsReq) (res *gubernatorv1.GetRateLimitsResp, err error) {
	ctx, traced := s.traceCall(ctx, s.traceHeader(h))
	defer func(began time.Time) { s.done("GetRateLimits", began, err); traced(res, err) }(time.Now())
	if err := s.authenticate(h); err != nil {
		return nil, err
	}
	if len(m.Requests) > MaxRequests {
		return nil, connect.NewError(connect.CodeOutOfRange, errors.New(msgTooMany))
	}
	if msg := s.unhealthy(); msg != "" {
		return nil, connect.NewError(connect.CodeUnavailable, errors.New(msg))
	}
	if res, handled, err := s.forward(ctx, h, m); handled {
		return res, err
	}
	if err := s.record.Room(ctx); err != nil {
		return nil, recordError(ctx, err)
	}
	res = newAnswers(len(m.Requests))
	var last uint64
	for i, r := range m.Requests {
		seq, err := s.one(r, res.Responses[i])
		if err != nil {
			return nil, err
		}
		last = max(last, seq)
	}
	end := server.RecordWait(ctx, last)
	err = s.record.Wait(ctx, last)
	end(err)
	if err != nil {
		return nil, recordError(ctx, err)
	}
	return res, nil
}

// one applies one request and writes its answer into a, which is empty. A
// problem with the request is its answer's error.
func (s *Service) one(r *gubernatorv1.RateLimitReq, a *gubernatorv1.RateLimitResp) (uint64, error) {
	c, err := toCheck(r)
	if err != nil {
		a.Error = err.Error()
		return 0, nil
	}
	v, seq, err := s.limiter.Limit(c)
	if err != nil {
		if re, ok := errors.AsType[*RequestError](err); ok {
			a.Error = re.Message
			return seq, nil
		}
		if ce, ok := errors.AsType[*connect.Error](err); ok {
			return 0, ce // the limiter's own answer to the caller, such as a cluster's Unavailable
		}
		return 0, connect.NewError(connect.CodeInternal, fmt.Errorf("internal error: %w", err))
	}
	v.answer(a, s.address)
	return seq, nil
}

// oneAnswer is the answer to a call of one request, the usual call, in one
// allocation instead of three.
type oneAnswer struct {
	res  gubernatorv1.GetRateLimitsResp
	ptrs [1]*gubernatorv1.RateLimitResp
	one  gubernatorv1.RateLimitResp
}

// newAnswers returns an answer of n empty responses.
func newAnswers(n int) *gubernatorv1.GetRateLimitsResp {
	if n == 1 {
		a := &oneAnswer{}
		a.ptrs[0] = &a.one
		a.res.Responses = a.ptrs[:]
		return &a.res
	}
	res := &gubernatorv1.GetRateLimitsResp{Responses: make([]*gubernatorv1.RateLimitResp, n)}
	all := make([]gubernatorv1.RateLimitResp, n)
	for i := range all {
		res.Responses[i] = &all[i]
	}
	return res
}

// health is HealthCheck's answer.
func (s *Service) health() *gubernatorv1.HealthCheckResp {
	res := &gubernatorv1.HealthCheckResp{Status: "healthy", PeerCount: 1, AdvertiseAddress: s.address}
	if msg := s.unhealthy(); msg != "" {
		res.Status, res.Message = "unhealthy", msg
	}
	return res
}
