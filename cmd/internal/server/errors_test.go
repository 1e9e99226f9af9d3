package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// spend brings tenant a to 90 of its 100 tokens, 60 of them by a task
// named big, and returns that task's id.
func spend(t *testing.T, e *env) uint64 {
	t.Helper()
	ctx := context.Background()
	a, _ := e.session(keyA)
	big, err := a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "big"}}))
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range map[uint64]int64{big.Msg.Node.Id: 60, 0: 30} {
		if _, err := a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: id, Resource: "tokens", Amount: n})); err != nil {
			t.Fatal(err)
		}
	}
	return big.Msg.Node.Id
}

func checkDenial(t *testing.T, e *env, big uint64, d *governorv1.Denial) {
	t.Helper()
	want := &governorv1.Denial{
		NodeId: uint64(e.tenants["a"]), NodeName: "a", Resource: "tokens", Used: 90, Limit: 100, Requested: 20,
		LargestConsumer: &governorv1.Consumer{NodeId: big, Name: "big", Used: 60},
	}
	if !proto.Equal(d, want) {
		t.Fatalf("denial:\n got %v\nwant %v", d, want)
	}
}

// TestDenialOverJSON: a plain HTTP POST of JSON, as curl sends it, gets the
// denial's detail.
func TestDenialOverJSON(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	big := spend(t, e)
	var body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"details"`
	}
	status := e.consumeJSON(t, `{"resource":"tokens","amount":"20","requestId":"curl-1"}`, &body)
	if status != http.StatusTooManyRequests || body.Code != "resource_exhausted" || len(body.Details) != 1 || body.Details[0].Type != "governor.v1.Denial" {
		t.Fatalf("status %d, body %+v", status, body)
	}
	if want := `The tokens budget of "a" is spent (90 of 100 used, 20 more asked); the largest consumer is "big" with 60.`; body.Message != want {
		t.Fatalf("message %q, want %q", body.Message, want)
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(body.Details[0].Value, "="))
	if err != nil {
		t.Fatal(err)
	}
	var d governorv1.Denial
	if err := proto.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	checkDenial(t, e, big, &d)
}

// TestDenialOverEveryProtocol: the Connect, gRPC and gRPC-Web clients get
// the same denial detail.
func TestDenialOverEveryProtocol(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	big := spend(t, e)
	for name, opts := range map[string][]connect.ClientOption{
		"connect":      nil,
		"connect json": {connect.WithProtoJSON()},
		"grpc":         {connect.WithGRPC()},
		"grpc-web":     {connect.WithGRPCWeb()},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.client(keyA, opts...).Consume(context.Background(),
				connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 20}))
			if code(err) != "resource_exhausted" {
				t.Fatalf("want resource_exhausted, got %v", err)
			}
			checkDenial(t, e, big, detail[governorv1.Denial](t, err))
		})
	}
}

// TestCredentials: who may call what.
func TestCredentials(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	open := func(cred string, ttl *durationpb.Duration) error {
		return call(e.client(cred).OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{Ttl: ttl})))
	}
	closed, _ := e.session(keyA)
	if err := call(closed.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))); err != nil {
		t.Fatal(err)
	}
	lapsed, _ := e.session(keyA)
	e.clock.Advance(31 * time.Second)
	_, live := e.session(keyA)
	admin, adminSess := e.session(adminKey)
	if adminSess.ScopeNodeId != uint64(engine.RootID) || adminSess.Tenant != "" {
		t.Fatalf("admin session: %+v", adminSess)
	}
	cases := []struct {
		name string
		err  error
		want string
		text string
	}{
		{"open with a bad key", open("not-a-key-at-all-1234", nil), "unauthenticated", "matches none"},
		{"open without a credential", call(e.client("").OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{}))), "unauthenticated", "Authorization"},
		{"open with a token", open(live.Token, nil), "unauthenticated", "session token"},
		{"open with too long a ttl", open(keyA, durationpb.New(2*time.Hour)), "invalid_argument", "between 1s and 1h0m0s"},
		{"open with ttl 0", open(keyA, durationpb.New(0)), "invalid_argument", "ttl"},
		{"a closed session's token", call(closed.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))), "unauthenticated", "open a new session"},
		{"a lapsed session's token", call(lapsed.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))), "unauthenticated", "OpenSession"},
		{"a key where a token is needed", call(e.client(keyA).CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x"}}))), "unauthenticated", "open a session"},
		{"a key on acquire", call(e.client(keyA).Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))), "unauthenticated", "OpenSession"},
		{"a wrong token", call(e.client(strings.Repeat("ab", 16)).Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))), "unauthenticated", "OpenSession"},
		{"a wrong key on consume", call(e.client("wrong-key-123456789").Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1}))), "unauthenticated", "neither"},
		{"the admin edits the root", call(admin.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: 1, Resource: "tokens", Value: ptr[int64](1000)}))), "ok", ""},
		{"the admin key consumes on a tenant", call(e.client(adminKey).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(e.tenants["b"]), Resource: "tokens", Amount: 1}))), "ok", ""},
	}
	for _, c := range cases {
		if code(c.err) != c.want || c.err != nil && !strings.Contains(c.err.Error(), c.text) {
			t.Errorf("%s: want %s mentioning %q, got %v", c.name, c.want, c.text, c.err)
		}
	}
}

// TestRecordErrors: what a client reads when the record cannot be reached.
func TestRecordErrors(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(live)
	cancel()
	timedOut, cancel2 := context.WithTimeout(live, -time.Second)
	defer cancel2()
	failed := fmt.Errorf("%w: append: %w", eventlog.ErrCommitFailed, context.DeadlineExceeded)
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want connect.Code
		text string
	}{
		{live, failed, connect.CodeUnavailable, "lost its record"},
		{gone, failed, connect.CodeUnavailable, "lost its record"},
		{live, eventlog.ErrStopped, connect.CodeUnavailable, "shutting down"},
		{gone, context.Canceled, connect.CodeCanceled, ""},
		{timedOut, context.DeadlineExceeded, connect.CodeDeadlineExceeded, ""},
	} {
		got := recordError(c.ctx, c.err)
		if connect.CodeOf(got) != c.want || !strings.Contains(got.Error(), c.text) {
			t.Errorf("%v: got %v, want %v mentioning %q", c.err, got, c.want, c.text)
		}
	}
}

// TestBadArguments: every invalid field is InvalidArgument naming it.
func TestBadArguments(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	a, _ := e.session(keyA)
	long := strings.Repeat("x", 300)
	if err := call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1, RequestId: "r"}))); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		field string
		err   error
	}{
		{"amount", call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: -1})))},
		{"amount", call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", MaxWait: durationpb.New(time.Second)})))},
		{"max_wait", call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1, MaxWait: durationpb.New(-time.Second)})))},
		{"spec.rates.http.period", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Rates: map[string]*governorv1.Rate{"http": {Limit: 5}}}})))},
		{"spec.rates.http.zone", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Rates: map[string]*governorv1.Rate{"http": {Limit: 5, Calendar: governorv1.CalendarUnit_CALENDAR_UNIT_DAY, Zone: "Mars/Olympus"}}}})))},
		{"rate.burst", call(a.SetRate(ctx, connect.NewRequest(&governorv1.SetRateRequest{NodeId: 5, Resource: "http", Rate: &governorv1.Rate{Limit: 5, Period: durationpb.New(time.Second), Burst: 2}})))},
		{"defaults.rates.http.limit", call(a.SetDefaults(ctx, connect.NewRequest(&governorv1.SetDefaultsRequest{Defaults: &governorv1.Defaults{Rates: map[string]*governorv1.Rate{"http": {Period: durationpb.New(time.Second)}}}})))},
		{"resource", call(a.ResetRate(ctx, connect.NewRequest(&governorv1.ResetRateRequest{NodeId: 5})))},
		{"resource", call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "Tokens", Amount: 1})))},
		{"request_id", call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1, RequestId: long})))},
		{"request_id", call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 2, RequestId: "r"})))},
		{"node_id", call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: 1 << 63, Resource: "tokens", Amount: 1})))},
		{"spec", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{})))},
		{"spec.name", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{}})))},
		{"spec.name", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: long}})))},
		{"spec.quotas key", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Quotas: map[string]int64{"9": 1}}})))},
		{"spec.limits.db", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Limits: map[string]int64{"db": -1}}})))},
		{"spec.weight", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Weight: 1001}})))},
		{"spec.priority", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Priority: -1001}})))},
		{"spec.deadline", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Deadline: &timestamppb.Timestamp{Seconds: -5}}})))},
		{"spec.retention", call(a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "x", Retention: durationpb.New(-time.Second)}})))},
		{"spec.retention", call(a.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{Name: "x", Spec: &governorv1.NodeSpec{Retention: durationpb.New(engine.MaxRetention + time.Second)}})))},
		{"name", call(a.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{})))},
		{"charge.amount", call(a.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{Name: "x", Charge: &governorv1.Charge{Resource: "tokens"}})))},
		{"charge.resource", call(a.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{Name: "x", Charge: &governorv1.Charge{Amount: 1}})))},
		{"class", call(a.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{})))},
		{"max_hold", call(a.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db", MaxHold: durationpb.New(-time.Second)})))},
		{"lease_id", call(a.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{})))},
		{"latency", call(a.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: 5, Latency: durationpb.New(-time.Second)})))},
		{"lease_id", call(a.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{})))},
		{"value", call(a.SetLimit(ctx, connect.NewRequest(&governorv1.SetLimitRequest{NodeId: 5, Class: "db", Value: ptr[int64](-1)})))},
		{"defaults.children.quotas key", call(a.SetDefaults(ctx, connect.NewRequest(&governorv1.SetDefaultsRequest{Defaults: &governorv1.Defaults{Children: &governorv1.ChildDefaults{Quotas: map[string]int64{"": 1}}}})))},
		{"reason", call(a.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: 5, Reason: strings.Repeat("x", 2000)})))},
		{"client_name", call(e.client(keyA).OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{ClientName: long})))},
	}
	for _, c := range cases {
		if code(c.err) != "invalid_argument" {
			t.Errorf("%s: want invalid_argument, got %v", c.field, c.err)
			continue
		}
		if bf := detail[governorv1.BadField](t, c.err); bf.Field != c.field || bf.Allowed == "" {
			t.Errorf("%s: detail names %q (%q)", c.field, bf.Field, bf.Allowed)
		}
	}
}

// TestWatchArguments: created_by_session watches no node of its own.
func TestWatchArguments(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	a, _ := e.session(keyA)
	s, err := a.WatchNode(context.Background(), connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: 5, CreatedBySession: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Receive() || code(s.Err()) != "invalid_argument" || detail[governorv1.BadField](t, s.Err()).Field != "created_by_session" {
		t.Fatalf("want invalid_argument naming created_by_session, got %v", s.Err())
	}
}
