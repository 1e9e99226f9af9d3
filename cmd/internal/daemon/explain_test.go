package daemon

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/testclock"
	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// A waiter behind a lease with a max hold is told when it will run, and
// governord's reaper grants it then: the grant is stamped with the
// estimate, once the clock reaches it, within the reaper's interval.
func TestExplainEstimateIsMetByTheReaper(t *testing.T) {
	clock := testclock.New(time.Unix(1_800_000_000, 0))
	cfg := testConfig("")
	cfg.ReapInterval = 10 * time.Millisecond
	d := startDaemon(t, cfg, Options{Clock: clock})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn := clientconn.Config{Addr: d.Addr().String(), APIKey: testTeamKey}
	session := func() governorv1connect.GovernorServiceClient {
		t.Helper()
		key, err := conn.API(nil)
		must(t, err)
		res, err := key.OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{Ttl: durationpb.New(time.Minute)}))
		must(t, err)
		token := res.Msg.Token
		api, err := conn.API(func() string { return token })
		must(t, err)
		return api
	}
	holder, waiter := session(), session()
	job, err := holder.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "job", Limits: map[string]int64{"db": 1}}}))
	must(t, err)
	id := job.Msg.Node.Id
	_, err = holder.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: id, Class: "db", MaxHold: durationpb.New(5 * time.Second)}))
	must(t, err)
	granted := make(chan *governorv1.Lease, 1)
	go func() {
		res, err := waiter.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: id, Class: "db"}))
		if err != nil {
			t.Errorf("the waiting acquire: %v", err)
			granted <- nil
			return
		}
		granted <- res.Msg.Lease
	}()
	var x *governorv1.ExplainResponse
	for x == nil || x.Waiting == nil {
		res, err := waiter.Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{NodeId: id, Name: "db"}))
		must(t, err)
		x = res.Msg
		time.Sleep(5 * time.Millisecond)
	}
	eta := x.Estimate.GetAt().AsTime()
	if want := clock.Now().Add(5 * time.Second); !eta.Equal(want) || x.Estimate.Basis[0].Kind != governorv1.EstimateBasis_ESTIMATE_BASIS_MAX_HOLD {
		t.Fatalf("estimate %v, want the end of the max hold at %s", x.Estimate, want)
	}
	clock.Set(eta)
	select {
	case l := <-granted:
		if l == nil || !l.GrantedAt.AsTime().Equal(eta) {
			t.Fatalf("granted %v, want a lease granted at the estimate %s", l, eta)
		}
	case <-ctx.Done():
		t.Fatal("the reaper never granted the waiter once the clock reached its estimate")
	}
}
