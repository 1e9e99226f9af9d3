package governor

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Rate is a rate cap: a budget of Limit units that refills with time,
// checked by every Consume through the task's chain together with quotas.
// governord checks the fields and answers a mistake with ErrInvalid.
type Rate struct {
	// Limit is the units admitted per Period (or per calendar unit).
	Limit int64
	// Period is the refill period; leave it zero with a Calendar unit.
	Period time.Duration
	// Burst is a leaky bucket's size; zero means Limit.
	Burst int64
	// Algorithm is TokenBucket (the zero value) or LeakyBucket.
	Algorithm Algorithm
	// Calendar, for a token bucket, ends each window with a calendar unit
	// in Zone instead of after a Period: 500 a Day.
	Calendar Calendar
	// Zone is the IANA time zone of the calendar unit; empty is UTC.
	Zone string
}

// Algorithm says how a rate cap refills.
type Algorithm int

const (
	// TokenBucket admits Limit units per window; the window opens at the
	// first charge and the bucket is full again when it ends.
	TokenBucket Algorithm = iota
	// LeakyBucket refills continuously, one unit every Period/Limit, up
	// to Burst.
	LeakyBucket
)

// Calendar is a calendar unit a token bucket's window ends with.
type Calendar int

// The calendar units; NoCalendar means windows of Period.
const (
	NoCalendar Calendar = iota
	Minute
	Hour
	Day
	Week
	Month
	Year
)

func (r Rate) wire() *governorv1.Rate {
	out := &governorv1.Rate{
		Limit:     r.Limit,
		Burst:     r.Burst,
		Algorithm: governorv1.RateAlgorithm_RATE_ALGORITHM_TOKEN_BUCKET,
		Calendar:  governorv1.CalendarUnit(r.Calendar),
		Zone:      r.Zone,
	}
	if r.Algorithm == LeakyBucket {
		out.Algorithm = governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET
	}
	if r.Period != 0 {
		out.Period = durationpb.New(r.Period)
	}
	return out
}
