package server

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestExplainOverTheWire fills tenant a's db limit with a lease that has a
// max hold, queues another acquire and explains it with the tenant's key:
// the binding limit, its holder, the waiter's place and the estimate.
func TestExplainOverTheWire(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	a, _ := e.session(keyA)
	hold := connect.NewRequest(&governorv1.AcquireRequest{Class: "db", MaxHold: durationpb.New(5 * time.Second)})
	for range 2 {
		if _, err := a.Acquire(ctx, hold); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go a.Acquire(wctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
	var x *governorv1.ExplainResponse
	eventually(t, "the third acquire waits", func() bool {
		res, err := e.client(keyA).Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{Name: "db"}))
		if err != nil {
			t.Fatal(err)
		}
		x = res.Msg
		return x.Waiting != nil
	})
	if len(x.Caps) != 1 || x.Caps[0].Kind != governorv1.CapKind_CAP_KIND_LIMIT || x.Caps[0].Used != 2 || len(x.Caps[0].Holders) != 2 {
		t.Fatalf("caps %v, want tenant a's full db limit with its two holders", x.Caps)
	}
	h := x.Caps[0].Holders[0]
	if h.Basis != governorv1.EstimateBasis_ESTIMATE_BASIS_MAX_HOLD || !h.EndsBy.AsTime().Equal(e.clock.Now().Add(5*time.Second)) {
		t.Errorf("holder %v, want one ending with its max hold in 5s", h)
	}
	if x.Waiting.Place != 1 || x.Waiting.Rotation != 1 || x.Waiting.TenantId != uint64(e.tenants["a"]) {
		t.Errorf("waiting %v, want first in tenant a's queue and in the rotation", x.Waiting)
	}
	est := x.Estimate
	if est.At == nil || !est.At.AsTime().Equal(e.clock.Now().Add(5*time.Second)) || len(est.Basis) != 1 ||
		est.Basis[0].Kind != governorv1.EstimateBasis_ESTIMATE_BASIS_MAX_HOLD {
		t.Errorf("estimate %v, want the max hold's end in 5s", est)
	}
	if _, err := e.client(keyB).Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{NodeId: uint64(e.tenants["a"]), Name: "db"})); code(err) != "not_found" {
		t.Errorf("tenant b explaining tenant a: %v, want not_found", err)
	}
}

// TestExplainHidesAnotherTenantsHolders fills a shared root limit with
// tenant b's lease: tenant a's key learns only that a shared cap binds, and
// nothing of b's work appears in the answer.
func TestExplainHidesAnotherTenantsHolders(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	admin, _ := e.session(adminKey)
	c := &engine.Call{}
	if err := e.store.Engine.SetLimit(c, engine.RootID, "gpu", ptr(int64(1))); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Wait(ctx, c.Seq); err != nil {
		t.Fatal(err)
	}
	b, _ := e.session(keyB)
	job, err := b.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "b-secret"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: job.Msg.Node.Id, Class: "gpu"})); err != nil {
		t.Fatal(err)
	}
	res, err := e.client(keyA).Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{Name: "gpu"}))
	if err != nil {
		t.Fatal(err)
	}
	x := res.Msg
	if len(x.Caps) != 1 || !x.Caps[0].Shared || x.Caps[0].NodeId != 0 || len(x.Caps[0].Holders) != 0 || x.Caps[0].Used != 0 {
		t.Fatalf("tenant a sees %v, want only that a shared limit binds", x.Caps)
	}
	if x.Estimate.At != nil || x.Estimate.Unknown == "" {
		t.Errorf("estimate %v, want unknown", x.Estimate)
	}
	text := protojson.Format(x)
	for _, leak := range []string{"b-secret", `"` + strconv.FormatUint(job.Msg.Node.Id, 10) + `"`, "holders"} {
		if strings.Contains(text, leak) {
			t.Errorf("tenant a's explanation contains %s: %s", leak, text)
		}
	}
	res, err = admin.Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{NodeId: uint64(e.tenants["a"]), Name: "gpu"}))
	if err != nil || len(res.Msg.Caps) != 1 || len(res.Msg.Caps[0].Holders) != 1 || res.Msg.Caps[0].Holders[0].NodeName != "b-secret" {
		t.Errorf("the admin sees %v (%v), want b's holder", res.Msg, err)
	}
}

// TestExplainRejectsBadFields checks each bad field is named.
func TestExplainRejectsBadFields(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	for field, req := range map[string]*governorv1.ExplainRequest{
		"name":   {Name: "Not A Key"},
		"amount": {Name: "db", Amount: -1},
	} {
		_, err := e.client(keyA).Explain(ctx, connect.NewRequest(req))
		if code(err) != "invalid_argument" || detail[governorv1.BadField](t, err).Field != field {
			t.Errorf("%s: %v, want invalid_argument naming %s", field, err, field)
		}
	}
}
