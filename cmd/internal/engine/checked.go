package engine

import (
	"math"
	"time"
)

// Caller numbers meet the engine's counters and clock here. Every counter
// and every instant is an int64; a sum that would not fit is refused before
// anything changes, never wrapped, so no call can leave a record that fails
// to load.

// MaxSpan is the longest duration a call or a setting may add to the time
// now: a lease's max_hold, a session's ttl, the engine's retention, tombstone
// and key-idle settings. Unix nanoseconds reach 2262, so a span of 366 days
// added to any time before 2261 fits.
const MaxSpan = 366 * 24 * time.Hour

// validSpan checks a duration that will be added to the time now: 0 (none)
// up to MaxSpan.
func validSpan(field string, d time.Duration, zero string) error {
	if d < 0 || d > MaxSpan {
		return invalid(field, "must be between 0 (%s) and %s (366 days), got %s", zero, MaxSpan, d)
	}
	return nil
}

// usageRoomLocked refuses a charge of amount of r that would take a usage
// counter past the largest int64. Every node's usage is part of its
// parent's, so the root's counter is the largest on any chain and the only
// one to check. Calls check it once the caps have admitted the charge, so a
// cap that refuses it answers as it always does.
func (e *Engine) usageRoomLocked(field, r string, amount int64) error {
	rs := e.root.findRes(r)
	if rs == nil || amount <= math.MaxInt64-rs.used {
		return nil
	}
	return invalid(field, "%d more of %q would take its total use past %d, the most a usage counter holds; nothing was charged",
		amount, r, int64(math.MaxInt64))
}
