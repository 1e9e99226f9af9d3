package engine

import (
	"math"
	"testing"
	"time"
)

// BenchmarkConsumeRate charges one unit through a chain of depth 4 (root,
// tenant, task, subtask) with a cap at every level: quotas only, a leaky
// bucket, a token bucket, or both a quota and a leaky bucket. Time moves 1 µs
// per consume, so every bucket refills on every call.
func BenchmarkConsumeRate(b *testing.B) {
	big := int64(math.MaxInt64 / 4)
	leakyRate := Rate{Limit: maxRateLimit, Period: time.Millisecond, Algorithm: LeakyBucket}
	tokenRate := Rate{Limit: maxRateLimit, Period: time.Second}
	cases := []struct {
		name   string
		quotas map[string]int64
		rates  map[string]Rate
	}{
		{"quotas", map[string]int64{"http": big}, nil},
		{"leaky", nil, map[string]Rate{"http": leakyRate}},
		{"token", nil, map[string]Rate{"http": tokenRate}},
		{"quotas+leaky", map[string]int64{"http": big}, map[string]Rate{"http": leakyRate}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			f := newFixture(b)
			commitEvents(b, f)
			id := RootID
			for _, name := range []string{"tenant", "task", "sub"} {
				id = f.sysCreate(id, Spec{Name: name, Quotas: tc.quotas, Rates: tc.rates})
			}
			if tc.quotas != nil {
				must(b, f.e.SetQuota(f.sys(), RootID, "http", &big))
			}
			if tc.rates != nil {
				r := tc.rates["http"]
				must(b, f.e.SetRate(f.sys(), RootID, "http", &r))
			}
			c := &Call{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.clock.Advance(time.Microsecond)
				if err := f.e.Consume(c, id, "http", 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
