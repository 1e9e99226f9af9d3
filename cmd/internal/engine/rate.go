package engine

import (
	"fmt"
	"math/bits"
	"time"
)

// Algorithm is how a rate cap refills. The numbers match Gubernator's.
type Algorithm uint8

// The algorithms of a rate cap.
const (
	// TokenBucket counts what was charged in a window that opens at the
	// first charge and lasts the period (or to the end of the calendar unit);
	// when the window ends the whole limit is available again.
	TokenBucket Algorithm = 0
	// LeakyBucket refills continuously, one unit every period/limit, up to
	// the burst. It is a GCRA in exact integer arithmetic.
	LeakyBucket Algorithm = 1
)

var algorithmNames = [...]string{TokenBucket: "token_bucket", LeakyBucket: "leaky_bucket"}

func (a Algorithm) String() string {
	if int(a) < len(algorithmNames) {
		return algorithmNames[a]
	}
	return fmt.Sprintf("algorithm(%d)", uint8(a))
}

// MarshalText writes the algorithm's name.
func (a Algorithm) MarshalText() ([]byte, error) {
	if int(a) >= len(algorithmNames) {
		return nil, invalid("algorithm", "unknown algorithm %d", uint8(a))
	}
	return []byte(algorithmNames[a]), nil
}

// UnmarshalText reads token_bucket or leaky_bucket.
func (a *Algorithm) UnmarshalText(b []byte) error {
	for i, n := range algorithmNames {
		if string(b) == n {
			*a = Algorithm(i)
			return nil
		}
	}
	return invalid("algorithm", "must be token_bucket or leaky_bucket, got %q", b)
}

// Rate is a rate cap: a budget of Limit units per Period that refills with
// time. A rate cap with a Calendar is a token bucket whose window ends at the
// end of the current calendar unit in Zone instead of after a Period.
type Rate struct {
	Limit     int64         `json:"limit"`
	Period    time.Duration `json:"period,omitempty"`    // 0 with a Calendar
	Burst     int64         `json:"burst,omitempty"`     // leaky bucket only; 0 means Limit
	Algorithm Algorithm     `json:"algorithm,omitempty"` // token_bucket by default
	Calendar  Calendar      `json:"calendar,omitempty"`  // token bucket only
	Zone      string        `json:"zone,omitempty"`      // IANA name for a Calendar; empty is UTC
}

// Bounds on a rate cap. They keep every computation inside 64 bits.
const (
	maxRateLimit    = 1_000_000_000
	minRatePeriod   = time.Millisecond
	maxRatePeriod   = 366 * 24 * time.Hour
	maxBurstRefill  = 10 * 366 * 24 * time.Hour // time a leaky bucket takes to refill a whole burst
	maxScheduleWait = 24 * time.Hour            // the highest ceiling Settings.MaxScheduleWait may set
)

// burst is the leaky bucket's capacity.
func (r *Rate) burst() int64 {
	if r.Burst == 0 {
		return r.Limit
	}
	return r.Burst
}

// CheckRate reports whether a rate cap is valid, as SetRate and a spec would
// check it, with an *InvalidError whose field starts with "rate". It reads
// the zone data of a calendar window's zone once per process.
func CheckRate(r *Rate) error {
	_, err := validRate("rate", r)
	return err
}

// validRate checks a rate cap and resolves its time zone.
func validRate(field string, r *Rate) (*time.Location, error) {
	if r.Limit < 1 || r.Limit > maxRateLimit {
		return nil, invalid(field+".limit", "must be between 1 and %d, got %d (a quota of 0 blocks a resource)", maxRateLimit, r.Limit)
	}
	if r.Algorithm > LeakyBucket {
		return nil, invalid(field+".algorithm", "must be token_bucket or leaky_bucket, got %d", uint8(r.Algorithm))
	}
	if r.Calendar != NoCalendar {
		return validCalendarRate(field, r)
	}
	if r.Zone != "" {
		return nil, invalid(field+".zone", "applies to a calendar window only; set calendar or leave zone empty")
	}
	if r.Period < minRatePeriod || r.Period > maxRatePeriod {
		return nil, invalid(field+".period", "must be between 1ms and 366 days (8784h), got %s", r.Period)
	}
	if r.Algorithm == TokenBucket {
		if r.Burst != 0 {
			return nil, invalid(field+".burst", "applies to leaky_bucket only; leave it 0 for token_bucket, got %d", r.Burst)
		}
		return time.UTC, nil
	}
	if r.Burst < 0 || r.Burst > maxRateLimit {
		return nil, invalid(field+".burst", "must be between 0 (the limit) and %d, got %d", maxRateLimit, r.Burst)
	}
	hi, lo := bits.Mul64(uint64(r.burst()), uint64(r.Period))
	if hi >= uint64(r.Limit) {
		return nil, invalid(field+".burst", "a burst of %d takes too long to refill at %d per %s (at most 10 years); lower the burst", r.burst(), r.Limit, r.Period)
	}
	if q, _ := bits.Div64(hi, lo, uint64(r.Limit)); q > uint64(maxBurstRefill) {
		return nil, invalid(field+".burst", "a burst of %d takes %s to refill at %d per %s (at most 10 years); lower the burst", r.burst(), time.Duration(q), r.Limit, r.Period)
	}
	return time.UTC, nil
}

func validCalendarRate(field string, r *Rate) (*time.Location, error) {
	if r.Calendar > Year {
		return nil, invalid(field+".calendar", "must be minute, hour, day, week, month or year, got %d", uint8(r.Calendar))
	}
	if r.Algorithm != TokenBucket || r.Period != 0 || r.Burst != 0 {
		return nil, invalid(field+".calendar", "a calendar window is a token bucket without period or burst; leave algorithm, period and burst unset")
	}
	loc, err := loadZone(r.Zone)
	if err != nil {
		return nil, invalid(field+".zone", "%q is not a known IANA time zone (for example \"UTC\" or \"Europe/Paris\"): %v", r.Zone, err)
	}
	return loc, nil
}

func validRates(field string, m map[string]Rate) error {
	if len(m) > maxCapsPerNode {
		return invalid(field, "at most %d entries, got %d", maxCapsPerNode, len(m))
	}
	for k, r := range m {
		if err := validKey(field+" key", k); err != nil {
			return err
		}
		if _, err := validRate(field+"."+k, &r); err != nil {
			return err
		}
	}
	return nil
}

func copyRates(m map[string]Rate) map[string]Rate {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]Rate, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
