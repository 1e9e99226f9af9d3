package adaptive

import (
	"slices"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
)

// reports builds a summary of n reports, the first over of them overloaded,
// with latencies lat[i % len(lat)] milliseconds.
func reports(n, over int, lat ...int64) summary {
	s := summary{samples: n, overloaded: over}
	for i := range n {
		s.latencies = append(s.latencies, lat[i%len(lat)]*int64(time.Millisecond))
	}
	return s
}

func TestDecide(t *testing.T) {
	db := Class{Name: "db", Min: 2, Max: 40, TargetP95: 100 * time.Millisecond, MaxOverloadShare: 0.1, MinSamples: 10}
	noLatency := db
	noLatency.TargetP95 = 0
	tests := []struct {
		name   string
		cl     Class
		limit  int64
		sum    summary
		want   int64
		reason string
		share  float64
		p95    time.Duration
	}{
		{"overload cuts 20 to 14", db, 20, reports(10, 2, 50), 14, ReasonOverload, 0.2, 50 * time.Millisecond},
		{"healthy adds one to 14", db, 14, reports(10, 0, 50), 15, ReasonHealthy, 0, 50 * time.Millisecond},
		{"p95 over target cuts", db, 20, reports(20, 0, 50, 50, 50, 50, 50, 50, 50, 50, 50, 200), 14, ReasonLatency, 0, 200 * time.Millisecond},
		{"both over cut once", db, 20, reports(10, 5, 300), 14, ReasonBoth, 0.5, 300 * time.Millisecond},
		{"cut stops at min", db, 3, reports(10, 10, 50), 2, ReasonOverload, 1, 50 * time.Millisecond},
		{"cut floors", db, 9, reports(10, 10, 50), 6, ReasonOverload, 1, 50 * time.Millisecond},
		{"at min a cut stays", db, 2, reports(10, 10, 50), 2, ReasonOverload, 1, 50 * time.Millisecond},
		{"increase stops at max", db, 40, reports(10, 0, 50), 40, ReasonHealthy, 0, 50 * time.Millisecond},
		{"over max comes down to max", db, 55, reports(10, 0, 50), 40, ReasonHealthy, 0, 50 * time.Millisecond},
		{"p95 equal to target is healthy", db, 14, reports(10, 0, 100), 15, ReasonHealthy, 0, 100 * time.Millisecond},
		{"share equal to max is healthy", db, 14, reports(10, 1, 50), 15, ReasonHealthy, 0.1, 50 * time.Millisecond},
		{"target 0 ignores latency", noLatency, 14, reports(10, 0, 5000), 15, ReasonHealthy, 0, 5 * time.Second},
		{"target 0 still cuts on overload", noLatency, 20, reports(10, 2, 5000), 14, ReasonOverload, 0.2, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := decide(tt.cl, tt.limit, tt.sum)
			want := engine.Adapt{Samples: tt.sum.samples, P95Nanos: int64(tt.p95), OverloadShare: tt.share, Reason: tt.reason}
			if got != tt.want || why != want {
				t.Fatalf("decide(%d) = %d, %+v; want %d, %+v", tt.limit, got, why, tt.want, want)
			}
		})
	}
}

func TestCut(t *testing.T) {
	for _, tt := range []struct{ in, want int64 }{
		{0, 0}, {1, 0}, {2, 1}, {10, 7}, {14, 9}, {20, 14}, {21, 14}, {1 << 62, 3228180212899171532},
	} {
		if got := cut(tt.in); got != tt.want {
			t.Errorf("cut(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestP95NearestRank(t *testing.T) {
	seq := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(n - i) // descending: p95 must sort
		}
		return out
	}
	for _, tt := range []struct {
		lat  []int64
		want int64
	}{
		{nil, 0}, {[]int64{7}, 7}, {seq(10), 10}, {seq(20), 19}, {seq(100), 95}, {seq(101), 96},
	} {
		if got := p95(tt.lat); got != tt.want {
			t.Errorf("p95 of %d latencies = %d, want %d", len(tt.lat), got, tt.want)
		}
	}
}

// TestWindow checks the sample rule: fewer than MinSamples reports wait for
// the next decision; a decision uses them all up; the p95 reads the most
// recent keep latencies while the count and share cover every report.
func TestWindow(t *testing.T) {
	var w window
	for i := range 9 {
		w.add(engine.ID(i+1), engine.Report{LatencyNanos: 1})
	}
	if _, ok := w.take(10); ok {
		t.Fatal("9 reports made a decision at min samples 10")
	}
	w.add(10, engine.Report{LatencyNanos: 1, Overloaded: true})
	s, ok := w.take(10)
	if !ok || s.samples != 10 || s.overloaded != 1 || len(s.latencies) != 10 {
		t.Fatalf("take after 10 reports = %+v, %v", s, ok)
	}
	if _, ok := w.take(1); ok {
		t.Fatal("a decision reused reports already taken")
	}
	for i := range keep + 5 {
		w.add(engine.ID(100+i), engine.Report{LatencyNanos: int64(i)})
	}
	s, _ = w.take(1)
	if s.samples != keep+5 || len(s.latencies) != keep || slices.Min(s.latencies) != 5 {
		t.Fatalf("after %d reports: %d samples, %d latencies kept, oldest kept %d; want the newest %d",
			keep+5, s.samples, len(s.latencies), slices.Min(s.latencies), keep)
	}
}

func TestFromConfig(t *testing.T) {
	got := FromConfig(map[string]config.Adaptive{
		"web": {Initial: 5, Min: 1, Max: 9, Interval: time.Second, MinSamples: 3},
		"db": {Initial: 20, Min: 2, Max: 40, TargetP95: time.Millisecond, MaxOverloadShare: 0.1,
			Interval: 2 * time.Second, MinSamples: 10},
	})
	want := []Class{
		{Name: "db", Initial: 20, Min: 2, Max: 40, TargetP95: time.Millisecond, MaxOverloadShare: 0.1,
			Interval: 2 * time.Second, MinSamples: 10},
		{Name: "web", Initial: 5, Min: 1, Max: 9, Interval: time.Second, MinSamples: 3},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("FromConfig = %+v, want %+v", got, want)
	}
}

func TestNormalized(t *testing.T) {
	for _, tt := range []struct{ in, want Class }{
		{Class{Initial: 100, Min: 2, Max: 40}, Class{Initial: 40, Min: 2, Max: 40, Interval: time.Second, MinSamples: 1}},
		{Class{Initial: 0, Min: 2, Max: 40, Interval: time.Minute, MinSamples: 5}, Class{Initial: 2, Min: 2, Max: 40, Interval: time.Minute, MinSamples: 5}},
	} {
		if got := tt.in.normalized(); got != tt.want {
			t.Errorf("normalized(%+v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
