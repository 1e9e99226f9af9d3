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
	res = &gubernatorv1.GetRateLimitsResp{Responses: make([]*gubernatorv1.RateLimitResp, len(m.Requests))}
	var last uint64
	for i, r := range m.Requests {
		answer, seq, err := s.one(r)
		if err != nil {
			return nil, err
		}
		res.Responses[i], last = answer, max(last, seq)
	}
	end := server.RecordWait(ctx, last)
	err = s.record.Wait(ctx, last)
	end(err)
	if err != nil {
		return nil, recordError(ctx, err)
	}
	return res, nil
}

// one applies one request. A problem with it is its answer's error.
func (s *Service) one(r *gubernatorv1.RateLimitReq) (*gubernatorv1.RateLimitResp, uint64, error) {
	c, err := toCheck(r)
	if err != nil {
		return &gubernatorv1.RateLimitResp{Error: err.Error()}, 0, nil
	}
	v, seq, err := s.limiter.Limit(c)
	if err != nil {
		if re, ok := errors.AsType[*RequestError](err); ok {
			return &gubernatorv1.RateLimitResp{Error: re.Message}, seq, nil
		}
		if ce, ok := errors.AsType[*connect.Error](err); ok {
			return nil, 0, ce // the limiter's own answer to the caller, such as a cluster's Unavailable
		}
		return nil, 0, connect.NewError(connect.CodeInternal, fmt.Errorf("internal error: %w", err))
	}
	return v.answer(s.address), seq, nil
}

// health is HealthCheck's answer.
func (s *Service) health() *gubernatorv1.HealthCheckResp {
	res := &gubernatorv1.HealthCheckResp{Status: "healthy", PeerCount: 1, AdvertiseAddress: s.address}
	if msg := s.unhealthy(); msg != "" {
		res.Status, res.Message = "unhealthy", msg
	}
	return res
}
