package tui

import (
	"strings"
	"testing"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestUsageShowsWaiting: a class with queued acquires says how many wait;
// one without says nothing of waiting.
func TestUsageShowsWaiting(t *testing.T) {
	limit := int64(2)
	n := &governorv1.NodeInfo{Classes: map[string]*governorv1.ClassUsage{
		"db":  {Limit: &limit, Held: 2, Waiting: 3},
		"gpu": {Held: 1},
	}}
	got := usage(n)
	if !strings.Contains(got, "[db] 2/2 +3 waiting") {
		t.Fatalf("usage %q does not show the 3 waiting on db", got)
	}
	if strings.Count(got, "waiting") != 1 {
		t.Fatalf("usage %q shows waiting for a class without waiters", got)
	}
}
