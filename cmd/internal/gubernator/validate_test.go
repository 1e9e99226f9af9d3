package gubernator

import (
	"strings"
	"testing"
	"time"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// req is a valid token bucket request: 10 per second.
func req(edit func(r *pb.RateLimitReq)) *pb.RateLimitReq {
	r := &pb.RateLimitReq{Name: "requests_per_sec", UniqueKey: "account:1", Hits: 1, Limit: 10, Duration: 1000}
	if edit != nil {
		edit(r)
	}
	return r
}

// TestToCheck maps each accepted form to its Check.
func TestToCheck(t *testing.T) {
	base := Check{Name: "requests_per_sec", Key: "account:1", Hits: 1, Limit: 10, Window: time.Second, Calendar: NoCalendar, Burst: 10}
	tests := []struct {
		name string
		edit func(r *pb.RateLimitReq)
		want func(c *Check)
	}{
		{"token bucket", nil, nil},
		{"token bucket ignores burst, as Gubernator does", func(r *pb.RateLimitReq) { r.Burst = 50 }, nil},
		{"leaky bucket, burst 0 is the limit", func(r *pb.RateLimitReq) { r.Algorithm = pb.Algorithm_LEAKY_BUCKET },
			func(c *Check) { c.Leaky = true }},
		{"leaky bucket with a burst", func(r *pb.RateLimitReq) { r.Algorithm, r.Burst = pb.Algorithm_LEAKY_BUCKET, 3 },
			func(c *Check) { c.Leaky, c.Burst = true, 3 }},
		{"hits 0 reads", func(r *pb.RateLimitReq) { r.Hits = 0 }, func(c *Check) { c.Hits = 0 }},
		{"hits above the limit are a request, not a mistake", func(r *pb.RateLimitReq) { r.Hits = 11 }, func(c *Check) { c.Hits = 11 }},
		{"cluster-only behaviours change nothing", func(r *pb.RateLimitReq) {
			r.Behavior = pb.Behavior_NO_BATCHING | pb.Behavior_GLOBAL | pb.Behavior_MULTI_REGION
		}, nil},
		{"created_at and metadata are accepted and not used", func(r *pb.RateLimitReq) {
			at := int64(1)
			r.CreatedAt, r.Metadata = &at, map[string]string{"trace": "x"}
		}, nil},
		{"reset", func(r *pb.RateLimitReq) { r.Hits, r.Behavior = 0, pb.Behavior_RESET_REMAINING },
			func(c *Check) { c.Hits, c.Reset = 0, true }},
		{"drain", func(r *pb.RateLimitReq) { r.Behavior = pb.Behavior_DRAIN_OVER_LIMIT }, func(c *Check) { c.Drain = true }},
		{"gregorian day", func(r *pb.RateLimitReq) { r.Behavior, r.Duration = pb.Behavior_DURATION_IS_GREGORIAN, 2 },
			func(c *Check) { c.Window, c.Calendar = 0, Day }},
		{"gregorian minute is duration 0", func(r *pb.RateLimitReq) { r.Behavior, r.Duration = pb.Behavior_DURATION_IS_GREGORIAN, 0 },
			func(c *Check) { c.Window, c.Calendar = 0, Minute }},
		{"max_wait on a leaky bucket", func(r *pb.RateLimitReq) {
			r.Algorithm, r.MaxWait, r.Behavior = pb.Algorithm_LEAKY_BUCKET, 120000, pb.Behavior_NO_BATCHING
		}, func(c *Check) { c.Leaky, c.MaxWait = true, 2*time.Minute }},
		// A peek answers the same whatever DRAIN_OVER_LIMIT and max_wait say,
		// as Gubernator's does; clients send RESET_REMAINING|DRAIN_OVER_LIMIT
		// with hits 0.
		{"a peek with drain", func(r *pb.RateLimitReq) { r.Hits, r.Behavior = 0, pb.Behavior_DRAIN_OVER_LIMIT },
			func(c *Check) { c.Hits = 0 }},
		{"a reset with drain", func(r *pb.RateLimitReq) {
			r.Hits, r.Behavior = 0, pb.Behavior_RESET_REMAINING|pb.Behavior_DRAIN_OVER_LIMIT
		}, func(c *Check) { c.Hits, c.Reset = 0, true }},
		{"a peek with max_wait on a token bucket", func(r *pb.RateLimitReq) { r.Hits, r.MaxWait = 0, 1000 },
			func(c *Check) { c.Hits = 0 }},
		{"a reset with max_wait on a leaky bucket", func(r *pb.RateLimitReq) {
			r.Algorithm, r.Hits, r.MaxWait, r.Behavior = pb.Algorithm_LEAKY_BUCKET, 0, 1000, pb.Behavior_RESET_REMAINING
		}, func(c *Check) { c.Leaky, c.Hits, c.Reset = true, 0, true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toCheck(req(tt.edit))
			if err != nil {
				t.Fatal(err)
			}
			want := base
			if tt.want != nil {
				tt.want(&want)
			}
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestToCheckErrors has one case per refusal, with the whole message.
func TestToCheckErrors(t *testing.T) {
	leaky := func(r *pb.RateLimitReq) { r.Algorithm, r.MaxWait = pb.Algorithm_LEAKY_BUCKET, 1000 }
	tests := []struct {
		name string
		edit func(r *pb.RateLimitReq)
		want string
	}{
		{"no name", func(r *pb.RateLimitReq) { r.Name = "" }, `name is required, such as "requests_per_sec".`},
		{"no key", func(r *pb.RateLimitReq) { r.UniqueKey = "" }, `unique_key is required, such as "account:12345".`},
		{"long key", func(r *pb.RateLimitReq) { r.UniqueKey = strings.Repeat("k", 257) }, "unique_key must be at most 256 bytes, got 257."},
		{"key not UTF-8", func(r *pb.RateLimitReq) { r.UniqueKey = "\xff" }, "unique_key must be valid UTF-8."},
		{"negative hits", func(r *pb.RateLimitReq) { r.Hits = -1 }, "hits must be 0 (read only) or more, got -1: governord does not take hits back."},
		{"reset with hits", func(r *pb.RateLimitReq) { r.Behavior = pb.Behavior_RESET_REMAINING },
			"hits must be 0 with RESET_REMAINING, got 1: reset first, then send the hits in a request of their own."},
		{"no limit", func(r *pb.RateLimitReq) { r.Limit = 0 }, "limit must be 1 to 1000000000, got 0."},
		{"limit too high", func(r *pb.RateLimitReq) { r.Limit = 1_000_000_001 }, "limit must be 1 to 1000000000, got 1000000001."},
		{"negative burst", func(r *pb.RateLimitReq) { r.Burst = -1 }, "burst must be 0 (the limit) to 1000000000, got -1."},
		{"leaky calendar", func(r *pb.RateLimitReq) {
			r.Algorithm, r.Behavior, r.Duration = pb.Algorithm_LEAKY_BUCKET, pb.Behavior_DURATION_IS_GREGORIAN, 1
		}, "DURATION_IS_GREGORIAN combines only with TOKEN_BUCKET: a calendar window is a token bucket that is full again when the interval ends."},
		{"unknown algorithm", func(r *pb.RateLimitReq) { r.Algorithm = 2 }, "algorithm must be TOKEN_BUCKET (0) or LEAKY_BUCKET (1), got 2."},
		{"unknown behavior", func(r *pb.RateLimitReq) { r.Behavior = 64 | pb.Behavior_GLOBAL },
			"behavior holds flags governord does not know (64); allowed are NO_BATCHING 1, GLOBAL 2, DURATION_IS_GREGORIAN 4, RESET_REMAINING 8, MULTI_REGION 16 and DRAIN_OVER_LIMIT 32, or-ed together."},
		{"no duration", func(r *pb.RateLimitReq) { r.Duration = 0 }, "duration must be 1 to 31622400000 milliseconds, got 0."},
		{"duration too long", func(r *pb.RateLimitReq) { r.Duration = 31622400001 }, "duration must be 1 to 31622400000 milliseconds, got 31622400001."},
		{"unknown calendar interval", func(r *pb.RateLimitReq) { r.Behavior, r.Duration = pb.Behavior_DURATION_IS_GREGORIAN, 6 },
			"duration must name a calendar interval with DURATION_IS_GREGORIAN: 0 minute, 1 hour, 2 day, 3 week, 4 month or 5 year; got 6."},
		{"negative max_wait", func(r *pb.RateLimitReq) { r.MaxWait = -1 }, "max_wait must be 0 (answer at once) or a number of milliseconds, got -1."},
		{"max_wait on a token bucket", func(r *pb.RateLimitReq) { r.MaxWait = 1000 },
			"max_wait combines only with LEAKY_BUCKET and not with TOKEN_BUCKET; send max_wait 0 or drop TOKEN_BUCKET."},
		{"max_wait with GLOBAL", func(r *pb.RateLimitReq) { leaky(r); r.Behavior = pb.Behavior_GLOBAL },
			"max_wait combines only with LEAKY_BUCKET and not with GLOBAL; send max_wait 0 or drop GLOBAL."},
		{"max_wait with drain", func(r *pb.RateLimitReq) { leaky(r); r.Behavior = pb.Behavior_DRAIN_OVER_LIMIT },
			"max_wait combines only with LEAKY_BUCKET and not with DRAIN_OVER_LIMIT; send max_wait 0 or drop DRAIN_OVER_LIMIT."},
		{"max_wait too long", func(r *pb.RateLimitReq) { leaky(r); r.MaxWait = 31622400001 },
			"max_wait must be at most 31622400000 milliseconds, got 31622400001."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := toCheck(req(tt.edit))
			if err == nil {
				t.Fatalf("accepted as %+v; want %q", c, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("got  %s\nwant %s", err, tt.want)
			}
		})
	}
}
