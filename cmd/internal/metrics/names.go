package metrics

import (
	"cmp"
	"slices"
)

// namedSeries is how many names of a node, beyond those it caps, get series
// of their own: the ones with the most use. A tenant that uses thousands of
// resource or class names adds at most this many series per metric.
const namedSeries = 20

// otherName labels the sum of a node's names that get no series of their
// own. A name starts with a lowercase letter, so it never is this.
const otherName = "_other"

// share is one name's figures on one node: its use, its cap, whether it has
// one.
type share struct {
	name   string
	used   int64
	cap    int64
	capped bool
}

// split keeps, of a node's names, those it caps (an operator or the file set
// them) and the namedSeries most used others, each on its own; the rest are
// summed into one share named otherName, with no cap. Names come out sorted,
// the sum last.
func split(all []share) []share {
	var kept, rest []share
	for _, s := range all {
		if s.capped {
			kept = append(kept, s)
		} else {
			rest = append(rest, s)
		}
	}
	slices.SortFunc(rest, func(a, b share) int {
		return cmp.Or(cmp.Compare(b.used, a.used), cmp.Compare(a.name, b.name))
	})
	n := min(len(rest), namedSeries)
	kept = append(kept, rest[:n]...)
	slices.SortFunc(kept, func(a, b share) int { return cmp.Compare(a.name, b.name) })
	if len(rest) > n {
		other := share{name: otherName}
		for _, s := range rest[n:] {
			other.used += s.used
		}
		kept = append(kept, other)
	}
	return kept
}
