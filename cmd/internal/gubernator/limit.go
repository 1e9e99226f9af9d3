package gubernator

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// EngineLimiter keeps the rate limits in the engine's tree: under Tenant, a
// node per name and beneath it a node per unique_key with a rate cap on
// Resource. It is safe for concurrent use.
type EngineLimiter struct {
	eng      KeyedConsumer
	tenant   engine.ID
	resource string
}

var _ Limiter = (*EngineLimiter)(nil)

// KeyedConsumer charges a keyed rate, as engine.Engine.ConsumeKeyed: an
// engine, or a cluster member that puts the call in the log.
type KeyedConsumer interface {
	ConsumeKeyed(c *engine.Call, k engine.KeyedLimit, n int64, o engine.ConsumeOptions) (engine.ConsumeResult, error)
}

// NewLimiter returns the limiter that keeps rate limits under node tenant,
// on resource.
func NewLimiter(eng KeyedConsumer, tenant engine.ID, resource string) *EngineLimiter {
	return &EngineLimiter{eng: eng, tenant: tenant, resource: resource}
}

// Limit applies c in one engine step.
func (l *EngineLimiter) Limit(c Check) (Verdict, uint64, error) {
	call := &engine.Call{}
	res, err := l.eng.ConsumeKeyed(call, l.keyed(c), c.Hits, engine.ConsumeOptions{MaxWait: c.MaxWait, Drain: c.Drain})
	if err != nil {
		v, err := refusal(c, err)
		return v, call.Seq, err
	}
	v := Verdict{Status: gubernatorv1.Status_UNDER_LIMIT, Limit: c.Limit, Remaining: res.Remaining, Reset: unixNano(res.Reset)}
	if res.Status == engine.Scheduled {
		v.Status, v.Remaining, v.RetryAfter = gubernatorv1.Status_SCHEDULED, 0, ceilMillis(res.RetryAfter)
	}
	return v, call.Seq, nil
}

// keyed is c as the engine names it.
func (l *EngineLimiter) keyed(c Check) engine.KeyedLimit {
	r := engine.Rate{Limit: c.Limit, Period: c.Window}
	switch {
	case c.Calendar != NoCalendar:
		r.Calendar = engine.Calendar(int(c.Calendar) - int(Minute) + int(engine.Minute))
	case c.Leaky:
		r.Algorithm = engine.LeakyBucket
		if c.Burst != c.Limit {
			r.Burst = c.Burst
		}
	}
	return engine.KeyedLimit{Parent: l.tenant, Group: c.Name, Key: c.Key, Resource: l.resource, Rate: r, Reset: c.Reset}
}

// refusal turns the engine's refusal into a verdict, or a request's error.
func refusal(c Check, err error) (Verdict, error) {
	var d *engine.DeniedError
	var inv *engine.InvalidError
	var bound *engine.BoundError
	switch {
	case errors.As(err, &d):
		v := Verdict{Status: gubernatorv1.Status_OVER_LIMIT, Limit: c.Limit, Remaining: d.Remaining}
		switch {
		case d.Rate == nil:
			v.Remaining = max(d.Limit-d.Used, 0) // a quota, which never refills
		case c.Drain:
			v.Remaining, v.Reset = 0, unixNano(d.Reset)
		default:
			v.Reset = unixNano(d.Reset)
		}
		switch {
		case c.MaxWait == 0:
		case d.NeverFits:
			v.Status = gubernatorv1.Status_NEVER_FITS
		default:
			v.RetryAfter = ceilMillis(d.RetryAfter)
		}
		return v, nil
	case errors.As(err, &inv):
		field, _ := strings.CutPrefix(inv.Field, "rate.")
		return Verdict{}, &RequestError{Message: fmt.Sprintf("%s: %s.", field, inv.Problem)}
	case errors.As(err, &bound):
		return Verdict{}, &RequestError{Message: bound.Error() + "."}
	case errors.Is(err, engine.ErrNodeEnded):
		return Verdict{}, &RequestError{Message: "this rate limit's node in the tree has ended (it or its tenant was cancelled or closed); it can be used again once the tree forgets it, after the node retention."}
	}
	return Verdict{}, err
}

// unixNano is a time from unix nanoseconds; 0 is the zero time.
func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// ceilMillis rounds d up to whole milliseconds, so a caller that sleeps
// retry_after never acts before its slot.
func ceilMillis(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}
