package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"governor.dev/governor/cmd/internal/printable"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// stateWords names node states the way the screen and describe print them.
var stateWords = map[governorv1.NodeState]string{
	governorv1.NodeState_NODE_STATE_ACTIVE:            "active",
	governorv1.NodeState_NODE_STATE_DONE:              "done",
	governorv1.NodeState_NODE_STATE_CANCELLED:         "cancelled",
	governorv1.NodeState_NODE_STATE_DEADLINE_EXCEEDED: "deadline exceeded",
}

// line describes one node on one line: name, id, state, use against caps,
// and the deadline.
func line(n *governorv1.NodeInfo) string {
	parts := []string{fmt.Sprintf("%s #%d %s", displayName(n), n.GetId(), stateWords[n.GetState()])}
	for _, name := range slices.Sorted(maps.Keys(n.GetResources())) {
		r := n.GetResources()[name]
		if r.Cap != nil {
			parts = append(parts, fmt.Sprintf("%s %d/%d", name, r.GetUsed(), r.GetCap()))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d", name, r.GetUsed()))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.GetClasses())) {
		c := n.GetClasses()[name]
		text := fmt.Sprintf("[%s] %d held", name, c.GetHeld())
		if c.Limit != nil {
			text = fmt.Sprintf("[%s] %d/%d held", name, c.GetHeld(), c.GetLimit())
		}
		if w := c.GetWaiting(); w > 0 {
			text += fmt.Sprintf(", %d waiting", w)
		}
		parts = append(parts, text)
	}
	if d := n.GetDeadline(); d != nil {
		parts = append(parts, "deadline "+d.AsTime().UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, "  ")
}

// displayName is a node's name as printed: control characters and other
// runes a terminal would act on are escaped.
func displayName(n *governorv1.NodeInfo) string {
	if n.GetDepth() == 0 {
		return "(root)"
	}
	return printable.Name(n.GetName())
}

// defaultsLine describes the defaults a node gives its new children; empty
// when it gives none.
func defaultsLine(d *governorv1.Defaults) string {
	var parts []string
	add := func(label string, m map[string]int64) {
		if len(m) > 0 {
			parts = append(parts, label+" "+caps(m))
		}
	}
	add("quotas", d.GetQuotas())
	add("limits", d.GetLimits())
	add("children's quotas", d.GetChildren().GetQuotas())
	add("children's limits", d.GetChildren().GetLimits())
	return strings.Join(parts, "; ")
}

func caps(m map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(out, " ")
}

// checkOutput refuses an -o that is neither text nor json.
func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return usagef("-o %q is not an output format; use text or json", output)
	}
	return nil
}
