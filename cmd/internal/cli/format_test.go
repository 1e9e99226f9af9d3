package cli

import (
	"strings"
	"testing"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestDescribeLineShowsWaiting: describe's line for a node says how many
// acquires wait on each class that has waiters, and nothing of waiting for
// one that has none.
func TestDescribeLineShowsWaiting(t *testing.T) {
	limit := int64(2)
	n := &governorv1.NodeInfo{Name: "job", Depth: 1, Classes: map[string]*governorv1.ClassUsage{
		"db":  {Limit: &limit, Held: 2, Waiting: 3},
		"gpu": {Held: 1},
	}}
	got := line(n)
	if !strings.Contains(got, "[db] 2/2 held, 3 waiting") {
		t.Fatalf("line %q does not show the 3 waiting on db", got)
	}
	if !strings.Contains(got, "[gpu] 1 held") || strings.Count(got, "waiting") != 1 {
		t.Fatalf("line %q shows waiting for a class without waiters", got)
	}
}
