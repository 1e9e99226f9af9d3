package adaptive

import (
	"slices"

	"governor.dev/governor/cmd/internal/engine"
)

// Why a controller set a limit, as its event records it.
const (
	ReasonInitial  = "initial"         // the root had no limit on the class
	ReasonHealthy  = "healthy"         // p95 and overload share within bounds: +1
	ReasonLatency  = "p95 over target" // ×0.7
	ReasonOverload = "overloaded"      // overload share over the maximum: ×0.7
	ReasonBoth     = "p95 over target, overloaded"
)

// summary is what one decision reads: every report since the last decision,
// and the latencies of the most recent of them.
type summary struct {
	samples    int
	overloaded int
	latencies  []int64 // nanoseconds, in no particular order
}

// decide applies the rule to the current limit. It returns the next limit and
// the inputs that led to it; the next limit equals limit when the rule leaves
// it where it is (at Min and cut, at Max and healthy). The caller has checked
// that sum holds at least MinSamples reports.
func decide(cl Class, limit int64, sum summary) (int64, engine.Adapt) {
	why := engine.Adapt{Samples: sum.samples, P95Nanos: p95(sum.latencies)}
	if sum.samples > 0 {
		why.OverloadShare = float64(sum.overloaded) / float64(sum.samples)
	}
	slow := cl.TargetP95 > 0 && why.P95Nanos > int64(cl.TargetP95)
	overloaded := why.OverloadShare > cl.MaxOverloadShare
	switch {
	case slow && overloaded:
		why.Reason = ReasonBoth
	case slow:
		why.Reason = ReasonLatency
	case overloaded:
		why.Reason = ReasonOverload
	default:
		why.Reason = ReasonHealthy
		return min(cl.Max, limit+1), why
	}
	return max(cl.Min, cut(limit)), why
}

// cut is ⌊limit × 0.7⌋ for a limit of 0 or more, without overflow.
func cut(limit int64) int64 { return limit/10*7 + limit%10*7/10 }

// p95 is the nearest-rank 95th percentile: the smallest latency that at least
// 95% of the latencies do not exceed. It sorts lat in place.
func p95(lat []int64) int64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	rank := (95*len(lat) + 99) / 100 // ⌈0.95 n⌉
	return lat[rank-1]
}
