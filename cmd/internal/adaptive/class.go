package adaptive

import (
	"cmp"
	"slices"
	"time"

	"governor.dev/governor/cmd/internal/config"
)

// Class configures the controller of one concurrency class. The zero value is
// not useful; Max must be at least Min, and Min at least 1.
type Class struct {
	// Name is the concurrency class whose root limit the controller moves.
	Name string
	// Initial is the limit set when the root has none on the class; it is
	// kept within [Min, Max].
	Initial int64
	// Min and Max bound every limit the controller sets.
	Min, Max int64
	// TargetP95 is the p95 latency above which the limit is cut; 0 ignores
	// latency.
	TargetP95 time.Duration
	// MaxOverloadShare is the share of overloaded reports, 0 to 1, above
	// which the limit is cut.
	MaxOverloadShare float64
	// Interval is how often the controller decides; New makes a
	// non-positive one a second.
	Interval time.Duration
	// MinSamples is how many reports a decision needs; New makes a
	// non-positive one 1.
	MinSamples int
}

// FromConfig returns the classes of a configuration's adaptive section,
// sorted by name.
func FromConfig(m map[string]config.Adaptive) []Class {
	out := make([]Class, 0, len(m))
	for name, a := range m {
		out = append(out, Class{
			Name: name, Initial: a.Initial, Min: a.Min, Max: a.Max, TargetP95: a.TargetP95,
			MaxOverloadShare: a.MaxOverloadShare, Interval: a.Interval, MinSamples: a.MinSamples,
		})
	}
	slices.SortFunc(out, func(a, b Class) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// normalized returns cl with the defaults New applies.
func (cl Class) normalized() Class {
	if cl.Interval <= 0 {
		cl.Interval = time.Second
	}
	if cl.MinSamples < 1 {
		cl.MinSamples = 1
	}
	cl.Initial = clamp(cl.Initial, cl.Min, cl.Max)
	return cl
}

func clamp(v, lo, hi int64) int64 {
	return max(lo, min(hi, v))
}
