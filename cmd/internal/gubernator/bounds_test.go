package gubernator

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// TestKeysAreBoundAsNodes: each key is a node of its tenant, so a flood of
// distinct keys stops at the tenant's node bound with an error on that
// request alone, which names the bound; the keys it holds keep answering.
func TestKeysAreBoundAsNodes(t *testing.T) {
	eng, tenant := engineTenant(t, time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC))
	b := engine.DefaultBounds()
	b[engine.BoundNodes] = 4 // the name's node and three keys
	if err := eng.SetBounds(engine.BoundsConfig{Default: engine.DefaultBounds(), PerTenant: map[engine.ID]engine.Bounds{tenant: b}}); err != nil {
		t.Fatal(err)
	}
	lim := NewLimiter(eng, tenant, "gubernator")
	check := func(key string) Check {
		return Check{Name: "n", Key: key, Hits: 1, Limit: 10, Window: time.Second, Calendar: NoCalendar}
	}
	for i := range 3 {
		if v, _, err := lim.Limit(check(fmt.Sprint("k", i))); err != nil || v.Status != pb.Status_UNDER_LIMIT {
			t.Fatalf("key %d: %+v, %v", i, v, err)
		}
	}
	seq := eng.Seq()
	_, _, err := lim.Limit(check("k3"))
	var re *RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "bound on nodes: it holds 4, the call would add 1, and the bound is 4") {
		t.Fatalf("a fifth node: %v, want a request error naming the node bound", err)
	}
	if eng.Seq() != seq {
		t.Fatalf("the refused key recorded events %d to %d", seq+1, eng.Seq())
	}
	if v, _, err := lim.Limit(check("k0")); err != nil || v.Status != pb.Status_UNDER_LIMIT {
		t.Fatalf("a key the tenant holds after the refusal: %+v, %v", v, err)
	}
}
