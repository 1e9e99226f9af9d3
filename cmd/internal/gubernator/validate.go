package gubernator

import (
	"fmt"
	"time"
	"unicode/utf8"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// Bounds on what one call may carry.
const (
	// MaxRequests is the most requests one GetRateLimits may carry, as in
	// Gubernator.
	MaxRequests = 1000
	// maxNameBytes bounds name and unique_key: each is a node's name.
	maxNameBytes = 256
	// maxWindow bounds duration and max_wait: a leap year.
	maxWindow = 366 * 24 * time.Hour
	// maxLimit bounds limit and burst.
	maxLimit = 1_000_000_000
)

// The behavior flags.
const (
	flagNoBatching  = int32(gubernatorv1.Behavior_NO_BATCHING)
	flagGlobal      = int32(gubernatorv1.Behavior_GLOBAL)
	flagGregorian   = int32(gubernatorv1.Behavior_DURATION_IS_GREGORIAN)
	flagReset       = int32(gubernatorv1.Behavior_RESET_REMAINING)
	flagMultiRegion = int32(gubernatorv1.Behavior_MULTI_REGION)
	flagDrain       = int32(gubernatorv1.Behavior_DRAIN_OVER_LIMIT)
	knownFlags      = flagNoBatching | flagGlobal | flagGregorian | flagReset | flagMultiRegion | flagDrain
)

// toCheck validates one request. The error is the request's error field: a
// sentence that says what was wrong and what is allowed.
func toCheck(r *gubernatorv1.RateLimitReq) (Check, error) {
	if err := checkName("name", r.Name, "requests_per_sec"); err != nil {
		return Check{}, err
	}
	if err := checkName("unique_key", r.UniqueKey, "account:12345"); err != nil {
		return Check{}, err
	}
	flags := int32(r.Behavior)
	if unknown := flags &^ knownFlags; unknown != 0 {
		return Check{}, rejectf("behavior holds flags governord does not know (%d); allowed are NO_BATCHING 1, GLOBAL 2, DURATION_IS_GREGORIAN 4, RESET_REMAINING 8, MULTI_REGION 16 and DRAIN_OVER_LIMIT 32, or-ed together", unknown)
	}
	c := Check{
		Name: r.Name, Key: r.UniqueKey, Hits: r.Hits, Limit: r.Limit, Calendar: NoCalendar,
		Reset: flags&flagReset != 0, Drain: flags&flagDrain != 0 && r.Hits > 0,
	}
	switch r.Algorithm {
	case gubernatorv1.Algorithm_TOKEN_BUCKET:
	case gubernatorv1.Algorithm_LEAKY_BUCKET:
		c.Leaky = true
	default:
		return Check{}, rejectf("algorithm must be TOKEN_BUCKET (0) or LEAKY_BUCKET (1), got %d", int32(r.Algorithm))
	}
	if err := c.amounts(r); err != nil {
		return Check{}, err
	}
	if err := c.duration(r.Duration, flags&flagGregorian != 0); err != nil {
		return Check{}, err
	}
	if err := c.wait(r.MaxWait, flags); err != nil {
		return Check{}, err
	}
	return c, nil
}

// checkName checks name or unique_key: each names a node in the tree.
func checkName(field, v, example string) error {
	switch {
	case v == "":
		return rejectf("%s is required, such as %q", field, example)
	case len(v) > maxNameBytes:
		return rejectf("%s must be at most %d bytes, got %d", field, maxNameBytes, len(v))
	case !utf8.ValidString(v):
		return rejectf("%s must be valid UTF-8", field)
	}
	return nil
}

// amounts checks hits, limit and burst.
func (c *Check) amounts(r *gubernatorv1.RateLimitReq) error {
	switch {
	case r.Hits < 0:
		return rejectf("hits must be 0 (read only) or more, got %d: governord does not take hits back", r.Hits)
	case c.Reset && r.Hits != 0:
		return rejectf("hits must be 0 with RESET_REMAINING, got %d: reset first, then send the hits in a request of their own", r.Hits)
	case r.Limit < 1 || r.Limit > maxLimit:
		return rejectf("limit must be 1 to %d, got %d", maxLimit, r.Limit)
	case r.Burst < 0 || r.Burst > maxLimit:
		return rejectf("burst must be 0 (the limit) to %d, got %d", maxLimit, r.Burst)
	}
	c.Burst = r.Limit
	if c.Leaky && r.Burst > 0 {
		c.Burst = r.Burst
	}
	return nil
}

// duration checks duration: milliseconds, or a calendar interval.
func (c *Check) duration(d int64, gregorian bool) error {
	if gregorian {
		if c.Leaky {
			return rejectf("DURATION_IS_GREGORIAN combines only with TOKEN_BUCKET: a calendar window is a token bucket that is full again when the interval ends")
		}
		if d < int64(Minute) || d > int64(Year) {
			return rejectf("duration must name a calendar interval with DURATION_IS_GREGORIAN: 0 minute, 1 hour, 2 day, 3 week, 4 month or 5 year; got %d", d)
		}
		c.Calendar = Calendar(d)
		return nil
	}
	if d < 1 || d > maxWindow.Milliseconds() {
		return rejectf("duration must be 1 to %d milliseconds, got %d", maxWindow.Milliseconds(), d)
	}
	c.Window = time.Duration(d) * time.Millisecond
	return nil
}

// wait checks max_wait and what it may be combined with. A calendar
// window is never leaky, so duration already refused max_wait with one. A
// peek (hits 0, as RESET_REMAINING requires) ignores max_wait, and toCheck
// ignores DRAIN_OVER_LIMIT with it: neither changes what a peek answers.
func (c *Check) wait(ms int64, flags int32) error {
	if ms < 0 {
		return rejectf("max_wait must be 0 (answer at once) or a number of milliseconds, got %d", ms)
	}
	if ms == 0 || c.Hits == 0 {
		return nil // a peek answers at once, as Gubernator's does
	}
	var with string
	switch {
	case !c.Leaky:
		with = "TOKEN_BUCKET"
	case flags&flagGlobal != 0:
		with = "GLOBAL"
	case flags&flagDrain != 0:
		with = "DRAIN_OVER_LIMIT"
	}
	if with != "" {
		return rejectf("max_wait combines only with LEAKY_BUCKET and not with %s; send max_wait 0 or drop %s", with, with)
	}
	if ms > maxWindow.Milliseconds() {
		return rejectf("max_wait must be at most %d milliseconds, got %d", maxWindow.Milliseconds(), ms)
	}
	c.MaxWait = time.Duration(ms) * time.Millisecond
	return nil
}

// rejectf is a request's error. It starts with the field's name, as
// written on the wire, and ends with a full stop.
func rejectf(format string, args ...any) error {
	return &RequestError{Message: fmt.Sprintf(format, args...) + "."}
}
