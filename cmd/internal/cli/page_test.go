package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestDescribePagesChildren checks that describe shows a page of children
// and the cursor of the next, that --cursor shows that page, and that a page
// size above governord's maximum is refused.
func TestDescribePagesChildren(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	team := a.child(0, "team-a").GetId()
	var ids []uint64
	for i := range 5 {
		res, err := a.api.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{ParentId: team, Spec: &governorv1.NodeSpec{Name: fmt.Sprint("w", i)}}))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Msg.GetNode().GetId())
	}
	env := envFor(d, adminKey)
	r := governor(t, env, nil, "describe", "team-a", "--page-size", "2")
	mustContain(t, r, 0, "\n  w0 #", "\n  w1 #", fmt.Sprintf("… more of its 5 children: --cursor %d\n", ids[1]))
	if strings.Contains(r.stdout, "w2") {
		t.Fatalf("a page of 2 shows a third child:\n%s", r)
	}
	r = governor(t, env, nil, "describe", "team-a", "--page-size", "2", "--cursor", fmt.Sprint(ids[3]))
	mustContain(t, r, 0, "\n  w4 #")
	if strings.Contains(r.stdout, "w3") || strings.Contains(r.stdout, "more of its") {
		t.Fatalf("the last page shows an earlier child or a cursor:\n%s", r)
	}
	r = governor(t, env, nil, "describe", "team-a", "--page-size", "5001")
	mustContain(t, r, 2, "page_size must be 1 to 5000")
}
