package server

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestEveryCall walks through every call of the service with the generated
// client, as a worker of tenant a would.
func TestEveryCall(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	cl, sess := e.session(keyA)
	if sess.ScopeNodeId != uint64(e.tenants["a"]) || sess.Tenant != "a" || sess.Ttl.AsDuration() != 30*time.Second || len(sess.Token) != 32 {
		t.Fatalf("open session: %+v", sess)
	}

	hb, err := cl.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))
	if err != nil || hb.Msg.Ttl.AsDuration() != 30*time.Second || !hb.Msg.ExpiresAt.AsTime().Equal(e.clock.Now().Add(30*time.Second)) {
		t.Fatalf("heartbeat: %v %+v", err, hb)
	}

	job, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{
		Spec: &governorv1.NodeSpec{Name: "job", Quotas: map[string]int64{"tokens": 50}}, RequestId: "create-job",
	}))
	if err != nil {
		t.Fatal(err)
	}
	jobID := job.Msg.Node.Id
	if n := job.Msg.Node; n.ParentId != sess.ScopeNodeId || n.Tenant != "a" || n.Depth != 2 || n.State != governorv1.NodeState_NODE_STATE_ACTIVE || n.Resources["tokens"].GetCap() != 50 {
		t.Fatalf("create: %+v", n)
	}

	ens, err := cl.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{
		ParentId: jobID, Name: "step", Charge: &governorv1.Charge{Resource: "tokens", Amount: 5},
	}))
	if err != nil || !ens.Msg.Created {
		t.Fatalf("ensure: %v %+v", err, ens)
	}
	again, err := cl.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{ParentId: jobID, Name: "step"}))
	if err != nil || again.Msg.Created || again.Msg.Node.Id != ens.Msg.Node.Id {
		t.Fatalf("ensure again: %v %+v", err, again)
	}

	got, err := cl.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: jobID, IncludeChildren: true}))
	if err != nil || len(got.Msg.Children) != 1 || got.Msg.Node.Resources["tokens"].Used != 5 || got.Msg.Node.ChildrenCount != 1 {
		t.Fatalf("get node: %v %+v", err, got)
	}
	scope, err := cl.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{}))
	if err != nil || scope.Msg.Node.Id != sess.ScopeNodeId {
		t.Fatalf("get node 0 is the scope: %v %+v", err, scope)
	}

	sq, err := cl.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: jobID, Resource: "tokens", Value: ptr[int64](40)}))
	if err != nil || sq.Msg.Node.Resources["tokens"].GetCap() != 40 {
		t.Fatalf("set quota: %v %+v", err, sq)
	}
	sl, err := cl.SetLimit(ctx, connect.NewRequest(&governorv1.SetLimitRequest{NodeId: jobID, Class: "db", Value: ptr[int64](1)}))
	if err != nil || sl.Msg.Node.Classes["db"].GetLimit() != 1 {
		t.Fatalf("set limit: %v %+v", err, sl)
	}
	sd, err := cl.SetDefaults(ctx, connect.NewRequest(&governorv1.SetDefaultsRequest{NodeId: jobID, Defaults: &governorv1.Defaults{
		Quotas: map[string]int64{"tokens": 7}, Children: &governorv1.ChildDefaults{Limits: map[string]int64{"db": 1}},
	}}))
	if err != nil || sd.Msg.Node.Defaults.Quotas["tokens"] != 7 || sd.Msg.Node.Defaults.Children.Limits["db"] != 1 {
		t.Fatalf("set defaults: %v %+v", err, sd)
	}

	con, err := cl.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: jobID, Resource: "tokens", Amount: 10}))
	if err != nil || con.Msg.Remaining == nil || *con.Msg.Remaining != 25 {
		t.Fatalf("consume: want 25 left of the job's 40, got %v %+v", err, con)
	}

	acq, err := cl.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: jobID, Class: "db", MaxHold: durationpb.New(time.Minute)}))
	if err != nil {
		t.Fatal(err)
	}
	lease := acq.Msg.Lease
	if lease.NodeId != jobID || lease.SessionId != sess.SessionId || !lease.HoldUntil.AsTime().Equal(e.clock.Now().Add(time.Minute)) {
		t.Fatalf("acquire: %+v", lease)
	}
	val, err := cl.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{LeaseId: lease.Id}))
	if err != nil || !val.Msg.Valid || val.Msg.State != governorv1.LeaseState_LEASE_STATE_HELD || val.Msg.Lease.Id != lease.Id {
		t.Fatalf("validate: %v %+v", err, val)
	}
	rel, err := cl.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: lease.Id, Latency: durationpb.New(time.Millisecond)}))
	if err != nil || rel.Msg.Outcome != governorv1.ReleaseOutcome_RELEASE_OUTCOME_RELEASED {
		t.Fatalf("release: %v %+v", err, rel)
	}
	rel, err = cl.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: lease.Id}))
	if err != nil || rel.Msg.Outcome != governorv1.ReleaseOutcome_RELEASE_OUTCOME_ALREADY_RELEASED {
		t.Fatalf("release again: %v %+v", err, rel)
	}
	val, err = cl.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{LeaseId: lease.Id}))
	if err != nil || val.Msg.Valid || val.Msg.State != governorv1.LeaseState_LEASE_STATE_RELEASED || val.Msg.Reason == "" {
		t.Fatalf("validate released: %v %+v", err, val)
	}

	stream, err := cl.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: ens.Msg.Node.Id}))
	if err != nil || !stream.Receive() || stream.Msg().State != governorv1.NodeState_NODE_STATE_ACTIVE {
		t.Fatalf("watch: %v %v", err, stream.Err())
	}
	cn, err := cl.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: ens.Msg.Node.Id, Reason: "not needed"}))
	if err != nil || cn.Msg.Node.State != governorv1.NodeState_NODE_STATE_CANCELLED || cn.Msg.Node.EndedReason != "cancelled" {
		t.Fatalf("cancel: %v %+v", err, cn)
	}
	if !stream.Receive() || stream.Msg().State != governorv1.NodeState_NODE_STATE_CANCELLED {
		t.Fatalf("watch did not see the cancel: %v", stream.Err())
	}
	if stream.Receive() || stream.Err() != nil {
		t.Fatalf("watch should end cleanly after the node ended: %v", stream.Err())
	}
	cl2, err := cl.CloseNode(ctx, connect.NewRequest(&governorv1.CloseNodeRequest{NodeId: jobID}))
	if err != nil || cl2.Msg.Node.State != governorv1.NodeState_NODE_STATE_DONE {
		t.Fatalf("close node: %v %+v", err, cl2)
	}

	if _, err := cl.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{})); err != nil {
		t.Fatal(err)
	}
	_, err = cl.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))
	if code(err) != "unauthenticated" {
		t.Fatalf("heartbeat after close: want unauthenticated, got %v", err)
	}
}
