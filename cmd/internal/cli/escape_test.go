package cli_test

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestNamesAreEscaped checks that a node named with terminal escapes is
// printed with them escaped: nothing in it reaches the terminal as a
// control character.
func TestNamesAreEscaped(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	team := a.child(0, "team-a").GetId()
	evil := "evil\x1b]0;owned\x07\x1b[2J\u202e"
	if _, err := a.api.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{ParentId: team, Spec: &governorv1.NodeSpec{Name: evil}})); err != nil {
		t.Fatal(err)
	}
	r := governor(t, envFor(d, adminKey), nil, "describe", "team-a")
	mustContain(t, r, 0, `evil\x1b]0;owned\a\x1b[2J\u202e #`)
	if strings.ContainsAny(r.stdout, "\x1b\x07\u202e") {
		t.Fatalf("describe wrote a control character:\n%q", r.stdout)
	}
}
