package clientconn

import (
	"math"
	"testing"
	"time"
)

func TestJitterIsCappedAndFull(t *testing.T) {
	for _, tc := range []struct {
		attempt   int
		base, max time.Duration
		ceil      time.Duration
	}{
		{0, 10 * time.Millisecond, time.Second, 10 * time.Millisecond},
		{3, 10 * time.Millisecond, time.Second, 80 * time.Millisecond},
		{10, 10 * time.Millisecond, time.Second, time.Second},
		{62, 10 * time.Millisecond, time.Second, time.Second},
		// Any numbers a caller may pass to Backoff: nothing wraps.
		{29, time.Hour, math.MaxInt64, math.MaxInt64},
		{0, math.MaxInt64, math.MaxInt64, math.MaxInt64},
		{1, math.MaxInt64 / 2, math.MaxInt64, math.MaxInt64 - 1},
		{5, time.Second, time.Hour, 32 * time.Second},
	} {
		var low, high bool
		for range 2000 {
			d := Jitter(tc.attempt, tc.base, tc.max)
			if d < 0 || d > tc.ceil {
				t.Fatalf("Jitter(%d, %s, %s) = %s, outside [0, %s]", tc.attempt, tc.base, tc.max, d, tc.ceil)
			}
			low = low || d < tc.ceil/4
			high = high || d > tc.ceil*3/4
		}
		if !low || !high {
			t.Fatalf("Jitter(%d) does not spread over [0, %s]", tc.attempt, tc.ceil)
		}
	}
}
