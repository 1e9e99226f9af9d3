package server

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestTenantCannotReachAnotherTenant: a tenant's session, and its API key,
// naming another tenant's nodes and leases is refused exactly as naming ids
// never issued, and nothing changes.
func TestTenantCannotReachAnotherTenant(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	a, _ := e.session(keyA)
	aKey := e.client(keyA)
	b, _ := e.session(keyB)
	bTask, err := b.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "b-task", Limits: map[string]int64{"db": 1}}}))
	if err != nil {
		t.Fatal(err)
	}
	bID := bTask.Msg.Node.Id
	bLease, err := b.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: bID, Class: "db"}))
	if err != nil {
		t.Fatal(err)
	}
	// The key's principal session exists before the snapshot of the state.
	if _, err := aKey.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1})); err != nil {
		t.Fatal(err)
	}
	before := e.store.Engine.Dump()

	tenantB := uint64(e.tenants["b"])
	refused := []struct {
		name string
		id   uint64
		call func(id uint64) error
	}{
		{"consume", bID, func(id uint64) error {
			return call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: id, Resource: "tokens", Amount: 1})))
		}},
		{"consume by key", bID, func(id uint64) error {
			return call(aKey.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: id, Resource: "tokens", Amount: 1})))
		}},
		{"create", bID, func(id uint64) error {
			return call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{ParentId: id, Spec: &governorv1.NodeSpec{Name: "x"}})))
		}},
		{"ensure by key", tenantB, func(id uint64) error {
			return call(aKey.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{ParentId: id, Name: "x"})))
		}},
		{"get", bID, func(id uint64) error {
			return call(a.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id, IncludeChildren: true})))
		}},
		{"cancel", bID, func(id uint64) error {
			return call(a.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: id})))
		}},
		{"close", bID, func(id uint64) error {
			return call(a.CloseNode(ctx, connect.NewRequest(&governorv1.CloseNodeRequest{NodeId: id})))
		}},
		{"set quota", bID, func(id uint64) error {
			return call(a.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: id, Resource: "tokens"})))
		}},
		{"set limit", bID, func(id uint64) error {
			return call(a.SetLimit(ctx, connect.NewRequest(&governorv1.SetLimitRequest{NodeId: id, Class: "db"})))
		}},
		{"set defaults", tenantB, func(id uint64) error {
			return call(a.SetDefaults(ctx, connect.NewRequest(&governorv1.SetDefaultsRequest{NodeId: id})))
		}},
		{"acquire", bID, func(id uint64) error {
			return call(a.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: id, Class: "db"})))
		}},
		{"root", 1, func(id uint64) error {
			return call(a.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id})))
		}},
		{"watch", bID, func(id uint64) error {
			s, err := a.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: id}))
			if err != nil {
				return err
			}
			defer s.Close()
			s.Receive()
			return s.Err()
		}},
	}
	// Another tenant's node answers word for word as an id never issued:
	// no call tells the two apart.
	const unused = 1 << 40
	for _, r := range refused {
		err := r.call(r.id)
		if code(err) != "not_found" {
			t.Errorf("%s: want not_found, got %v", r.name, err)
		}
		if other := r.call(unused); fmt.Sprint(other) != fmt.Sprint(err) {
			t.Errorf("%s: another tenant's node answers %v, an unused id %v", r.name, err, other)
		}
	}
	// Another tenant's lease is unknown to a: not even its existence shows.
	_, err = a.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: bLease.Msg.Lease.Id}))
	if code(err) != "failed_precondition" || detail[governorv1.LeaseEnded](t, err).Outcome != governorv1.LeaseEndedOutcome_LEASE_ENDED_OUTCOME_UNKNOWN {
		t.Errorf("release of b's lease: want failed_precondition with outcome unknown, got %v", err)
	}
	v, err := aKey.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{LeaseId: bLease.Msg.Lease.Id}))
	if err != nil || v.Msg.Valid || v.Msg.State != governorv1.LeaseState_LEASE_STATE_UNKNOWN {
		t.Errorf("validate of b's lease by a's key: want unknown, got %v %+v", err, v)
	}

	if after := e.store.Engine.Dump(); !reflect.DeepEqual(before, after) {
		t.Fatalf("refused calls changed the state:\nbefore %+v\nafter  %+v", before, after)
	}
}

// TestScopeNodeCannotBeEnded: node 0 names the caller's scope, which it may
// not end or re-cap; it may set its defaults.
func TestScopeNodeCannotBeEnded(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	a, _ := e.session(keyA)
	for name, err := range map[string]error{
		"cancel":    call(a.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{}))),
		"close":     call(a.CloseNode(ctx, connect.NewRequest(&governorv1.CloseNodeRequest{}))),
		"set quota": call(a.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{Resource: "tokens", Value: ptr[int64](1000)}))),
	} {
		if code(err) != "permission_denied" {
			t.Errorf("%s of the scope node: want permission_denied, got %v", name, err)
		}
	}
	if err := call(a.SetDefaults(ctx, connect.NewRequest(&governorv1.SetDefaultsRequest{Defaults: &governorv1.Defaults{Quotas: map[string]int64{"tokens": 5}}}))); err != nil {
		t.Errorf("set defaults of the scope node: %v", err)
	}
}

// call drops a response, keeping its error.
func call[T any](_ *connect.Response[T], err error) error { return err }
