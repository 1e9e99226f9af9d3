package server

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestSharedCapIsNotToldToATenant: when the root's cap refuses tenant a
// because tenant b spent it, a learns only that a shared budget above it
// is spent: no node, no figures, no consumer, not b's name; an admitted
// consume of a reports a's own cap, not the root's tighter remaining. The
// admin sees the root's cap and who spent it.
func TestSharedCapIsNotToldToATenant(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	cap := int64(60)
	if err := e.store.Engine.SetQuota(&engine.Call{}, engine.RootID, "tokens", &cap); err != nil {
		t.Fatal(err)
	}
	b, _ := e.session(keyB)
	if _, err := b.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 55})); err != nil {
		t.Fatal(err)
	}
	a, _ := e.session(keyA)
	ok, err := a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if ok.Msg.CapNodeId != uint64(e.tenants["a"]) || ok.Msg.GetRemaining() != 99 {
		t.Errorf("a's admitted consume reports cap %d with %d remaining; want a's own cap, 99", ok.Msg.CapNodeId, ok.Msg.GetRemaining())
	}
	_, err = a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 10}))
	d := detail[governorv1.Denial](t, err)
	if code(err) != "resource_exhausted" || !d.Shared || d.NodeId != 0 || d.NodeName != "" || d.Used != 0 || d.Limit != 0 || d.LargestConsumer != nil || d.Requested != 10 {
		t.Fatalf("a's refusal: %v, detail %+v; want a shared budget spent, nothing more", err, d)
	}
	for _, secret := range []string{`"b"`, `"root"`, "55", "60"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("a's refusal tells %s: %v", secret, err)
		}
	}
	admin, _ := e.session(adminKey)
	_, err = admin.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(e.tenants["a"]), Resource: "tokens", Amount: 10}))
	d = detail[governorv1.Denial](t, err)
	if d.Shared || d.NodeId != uint64(engine.RootID) || d.Used != 56 || d.Limit != 60 || d.LargestConsumer.GetName() != "b" {
		t.Fatalf("the admin's refusal: detail %+v; want the root's cap, 56 of 60, largest consumer b", d)
	}
}
