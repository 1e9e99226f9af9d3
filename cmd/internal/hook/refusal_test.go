package hook

import (
	"errors"
	"strings"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestSharedDenialNamesNoNode checks that a refusal by a budget shared
// above the tenant tells the model the resource and that it is spent,
// naming no node and no figures (governord told none), while a refusal by
// the run's own budget names it with its figures.
func TestSharedDenialNamesNoNode(t *testing.T) {
	refusal := func(d *governorv1.Denial) string {
		ce := connect.NewError(connect.CodeResourceExhausted, errors.New("spent"))
		detail, err := connect.NewErrorDetail(d)
		if err != nil {
			t.Fatal(err)
		}
		ce.AddDetail(detail)
		return denied(ce, "this tool call may not run").Message
	}
	got := refusal(&governorv1.Denial{Resource: "tool_calls", Requested: 1, Shared: true})
	if want := prefix + "a tool_calls budget shared above this tenant is spent, so this tool call may not run. Do not retry; stop and tell the user the budget is exhausted."; got != want {
		t.Errorf("shared refusal:\n got %q\nwant %q", got, want)
	}
	own := refusal(&governorv1.Denial{NodeId: 7, NodeName: "claude:s1", Resource: "tool_calls", Used: 3, Limit: 3, Requested: 1})
	if !strings.Contains(own, `the tool_calls budget of "claude:s1" is spent (3 of 3 used)`) {
		t.Errorf("own refusal: %q", own)
	}
}
