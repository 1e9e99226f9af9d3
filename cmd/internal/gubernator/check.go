package gubernator

import (
	"sync"
	"time"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// Calendar is a calendar interval a DURATION_IS_GREGORIAN request names.
type Calendar int8

// The calendar intervals, numbered as Gubernator numbers its durations.
// NoCalendar means duration is a number of milliseconds.
const (
	NoCalendar Calendar = iota - 1
	Minute
	Hour
	Day
	Week
	Month
	Year
)

// Check is one validated rate limit request.
type Check struct {
	// Name and Key identify the rate limit: Name is a node under the
	// tenant, Key a node under Name.
	Name, Key string
	// Hits to charge; 0 only reads.
	Hits int64
	// Limit hits per Window (or per Calendar interval).
	Limit int64
	// Window is the refill period; zero when Calendar is set.
	Window time.Duration
	// Calendar is the interval a gregorian request names, or NoCalendar.
	Calendar Calendar
	// Leaky selects the leaky bucket; otherwise the token bucket.
	Leaky bool
	// Burst is the leaky bucket's size; always at least 1 (a request's 0
	// is Limit). The token bucket's size is Limit.
	Burst int64
	// Reset refills the bucket (RESET_REMAINING); Hits is then 0.
	Reset bool
	// Drain empties the bucket when the hits are refused (DRAIN_OVER_LIMIT).
	Drain bool
	// MaxWait is how long the caller will wait for a booked slot; zero
	// answers at once. Only with Leaky.
	MaxWait time.Duration
}

// Verdict is the answer to one Check.
type Verdict struct {
	// Status is UNDER_LIMIT, OVER_LIMIT, SCHEDULED or NEVER_FITS.
	Status gubernatorv1.Status
	// Limit is the limit in force on the key.
	Limit int64
	// Remaining is what the tightest cap has left after the hits; never
	// negative.
	Remaining int64
	// Reset is when the tightest cap is full again, or, over the limit,
	// when the hits would fit.
	Reset time.Time
	// RetryAfter is the wait until a SCHEDULED slot, or the wait an
	// OVER_LIMIT request with MaxWait would have needed.
	RetryAfter time.Duration
}

// answer writes the wire form of v, given by owner, into r, which is empty.
func (v Verdict) answer(r *gubernatorv1.RateLimitResp, owner string) {
	r.Status = v.Status
	r.Limit = v.Limit
	r.Remaining = max(v.Remaining, 0)
	r.RetryAfter = v.RetryAfter.Milliseconds()
	r.Metadata = ownerMetadata(owner)
	if !v.Reset.IsZero() {
		r.ResetTime = v.Reset.UnixMilli()
	}
}

// owners holds the metadata of each owner's answers (ownerMetadata).
var owners sync.Map

// ownerMetadata is the metadata of an answer given by owner: one map per
// owner (a process has one, its API address), shared by all its answers
// and never written, so that an answer costs no map of its own.
func ownerMetadata(owner string) map[string]string {
	if md, ok := owners.Load(owner); ok {
		return md.(map[string]string)
	}
	md, _ := owners.LoadOrStore(owner, map[string]string{"owner": owner})
	return md.(map[string]string)
}
