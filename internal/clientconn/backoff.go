package clientconn

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Jitter is a full-jitter backoff: a random wait up to base·2^attempt,
// capped at most. Any base and most a caller gives are safe: base·2^attempt
// is compared with most without being computed when it would not fit.
func Jitter(attempt int, base, most time.Duration) time.Duration {
	ceil := most
	if attempt >= 0 && base > 0 && base <= most>>attempt {
		ceil = base << attempt
	}
	if ceil <= 0 {
		return 0
	}
	return rand.N(min(ceil, math.MaxInt64-1) + 1)
}

// Sleep waits d or until ctx ends, and says which with ctx's cause.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
