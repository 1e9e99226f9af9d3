package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// SetRate sets or removes a node's rate cap on a resource.
func (s *Server) SetRate(ctx context.Context, req *connect.Request[governorv1.SetRateRequest]) (*connect.Response[governorv1.SetRateResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkKey("resource", m.Resource); err != nil {
		return nil, err
	}
	var rate *engine.Rate
	if m.Rate != nil {
		r, err := checkRate("rate", m.Rate)
		if err != nil {
			return nil, err
		}
		rate = &r
	}
	info, err := s.change(ctx, p, "SetRate", m, m.NodeId, m.RequestId, func(c *engine.Call, id engine.ID) error {
		return s.store.SetRate(c, id, m.Resource, rate)
	})
	return reply(&governorv1.SetRateResponse{Node: info}, err)
}

// ResetRate refills a node's rate cap on a resource and forgives its debt.
func (s *Server) ResetRate(ctx context.Context, req *connect.Request[governorv1.ResetRateRequest]) (*connect.Response[governorv1.ResetRateResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkKey("resource", m.Resource); err != nil {
		return nil, err
	}
	info, err := s.change(ctx, p, "ResetRate", m, m.NodeId, m.RequestId, func(c *engine.Call, id engine.ID) error {
		return s.store.ResetRate(c, id, m.Resource)
	})
	return reply(&governorv1.ResetRateResponse{Node: info}, err)
}

var (
	wireAlgorithms = map[governorv1.RateAlgorithm]engine.Algorithm{
		governorv1.RateAlgorithm_RATE_ALGORITHM_UNSPECIFIED:  engine.TokenBucket,
		governorv1.RateAlgorithm_RATE_ALGORITHM_TOKEN_BUCKET: engine.TokenBucket,
		governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET: engine.LeakyBucket,
	}
	wireCalendars = map[governorv1.CalendarUnit]engine.Calendar{
		governorv1.CalendarUnit_CALENDAR_UNIT_UNSPECIFIED: engine.NoCalendar,
		governorv1.CalendarUnit_CALENDAR_UNIT_MINUTE:      engine.Minute,
		governorv1.CalendarUnit_CALENDAR_UNIT_HOUR:        engine.Hour,
		governorv1.CalendarUnit_CALENDAR_UNIT_DAY:         engine.Day,
		governorv1.CalendarUnit_CALENDAR_UNIT_WEEK:        engine.Week,
		governorv1.CalendarUnit_CALENDAR_UNIT_MONTH:       engine.Month,
		governorv1.CalendarUnit_CALENDAR_UNIT_YEAR:        engine.Year,
	}
)

// checkRate turns a wire rate into the engine's. The engine checks the
// numbers and the zone; its field names are mapped back onto field.
func checkRate(field string, r *governorv1.Rate) (engine.Rate, error) {
	alg, ok := wireAlgorithms[r.Algorithm]
	if !ok {
		return engine.Rate{}, badField(field+".algorithm", fmt.Sprintf("must be RATE_ALGORITHM_TOKEN_BUCKET or RATE_ALGORITHM_LEAKY_BUCKET, got %d", r.Algorithm))
	}
	cal, ok := wireCalendars[r.Calendar]
	if !ok {
		return engine.Rate{}, badField(field+".calendar", fmt.Sprintf("must be a CALENDAR_UNIT from MINUTE to YEAR, or unset; got %d", r.Calendar))
	}
	var period time.Duration
	if r.Period != nil {
		if err := r.Period.CheckValid(); err != nil {
			return engine.Rate{}, badField(field+".period", "must be a valid duration between 1ms and 366 days")
		}
		period = r.Period.AsDuration()
	}
	out := engine.Rate{Limit: r.Limit, Period: period, Burst: r.Burst, Algorithm: alg, Calendar: cal, Zone: r.Zone}
	if err := engine.CheckRate(&out); err != nil {
		return engine.Rate{}, renamed(field, err)
	}
	return out, nil
}

// renamed maps an engine error about "rate.x" onto the request's field.
func renamed(field string, err error) error {
	var inv *engine.InvalidError
	if !errors.As(err, &inv) {
		return toConnect(err)
	}
	name := inv.Field
	if rest, ok := strings.CutPrefix(name, "rate"); ok {
		name = field + rest
	}
	return badField(name, inv.Problem)
}

// checkRates checks a map of rate caps, in key order so that the same
// request always names the same field.
func checkRates(field string, m map[string]*governorv1.Rate) (map[string]engine.Rate, error) {
	if len(m) > maxCaps {
		return nil, badField(field, fmt.Sprintf("must have at most %d entries, got %d", maxCaps, len(m)))
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]engine.Rate, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkKey(field+" key", k); err != nil {
			return nil, err
		}
		if m[k] == nil {
			return nil, badField(field+"."+k, "must be a rate, not empty")
		}
		r, err := checkRate(field+"."+k, m[k])
		if err != nil {
			return nil, err
		}
		out[k] = r
	}
	return out, nil
}

// consumeResponse is what an admitted consume or a peek answers.
func consumeResponse(res engine.ConsumeResult) *governorv1.ConsumeResponse {
	out := &governorv1.ConsumeResponse{Status: governorv1.ConsumeStatus_CONSUME_STATUS_OK}
	if res.Capped {
		left := res.Remaining
		out.Remaining = &left
		out.ResetTime = stamp(res.Reset)
		out.CapNodeId = uint64(res.Node)
		out.CapLimit = res.Limit
		out.CapIsRate = res.Rate
	}
	if res.Status == engine.Scheduled {
		out.Status = governorv1.ConsumeStatus_CONSUME_STATUS_SCHEDULED
		out.RetryAfter = durationpb.New(res.RetryAfter)
	}
	return out
}
