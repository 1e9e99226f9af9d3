package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// tracedEnv is a governord whose calls are traced into an in-memory
// exporter, which the test reads.
func tracedEnv(t *testing.T) (*env, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return newEnvTraced(t, sqliteURL(t), tp), exp
}

// callSpan is the one span of a call to method; the test fails unless there
// is exactly one.
func callSpan(t *testing.T, exp *tracetest.InMemoryExporter, method string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "governor.v1.GovernorService/"+method {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one span of %s, got %d among %v", method, len(found), spanNames(exp))
	}
	return found[0]
}

// children are the spans named name beneath parent.
func children(exp *tracetest.InMemoryExporter, parent tracetest.SpanStub, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name && s.Parent.SpanID() == parent.SpanContext.SpanID() && s.SpanContext.TraceID() == parent.SpanContext.TraceID() {
			out = append(out, s)
		}
	}
	return out
}

func spanNames(exp *tracetest.InMemoryExporter) []string {
	var names []string
	for _, s := range exp.GetSpans() {
		names = append(names, s.Name)
	}
	return names
}

// attrs are a span's attributes by key.
func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(s.Attributes))
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// wantAttrs fails the test unless the span carries each of want.
func wantAttrs(t *testing.T, s tracetest.SpanStub, want ...attribute.KeyValue) {
	t.Helper()
	got := attrs(s)
	for _, kv := range want {
		if v, ok := got[kv.Key]; !ok || v != kv.Value {
			t.Errorf("span %s: %s = %v (present %v), want %v", s.Name, kv.Key, v.Emit(), ok, kv.Value.Emit())
		}
	}
}

// TestTraceConsume: a consume's span names the caller's scope, the node,
// the resource, the amount and the grant, and holds a child span for the
// wait for the record.
func TestTraceConsume(t *testing.T) {
	e, exp := tracedEnv(t)
	a := e.tenants["a"]
	_, err := e.client(keyA).Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(a), Resource: "tokens", Amount: 3}))
	if err != nil {
		t.Fatal(err)
	}
	s := callSpan(t, exp, "Consume")
	if s.SpanKind != trace.SpanKindServer {
		t.Errorf("the consume's span is of kind %v, want server", s.SpanKind)
	}
	wantAttrs(t, s, AttrTenant.String("a"), AttrScope.Int64(int64(a)), AttrNode.Int64(int64(a)), AttrResource.String("tokens"),
		AttrAmount.Int64(3), AttrDecision.String(DecisionGranted))
	if _, ok := attrs(s)[AttrSession]; !ok {
		t.Errorf("the consume's span has no %s", AttrSession)
	}
	waits := children(exp, s, SpanRecordWait)
	if len(waits) == 0 {
		t.Fatalf("the consume's span has no %s child among %v", SpanRecordWait, spanNames(exp))
	}
	last := waits[len(waits)-1]
	if _, ok := attrs(last)[AttrRecordSeq]; !ok || last.EndTime.Before(last.StartTime) || last.EndTime.After(s.EndTime) {
		t.Errorf("the record wait %+v is not a finished wait within the call (%s to %s)", last, s.StartTime, s.EndTime)
	}
}

// TestTraceRefusedConsume: a refused consume's span says it was refused,
// by which kind of cap on which node.
func TestTraceRefusedConsume(t *testing.T) {
	e, exp := tracedEnv(t)
	a := e.tenants["a"]
	_, err := e.client(keyA).Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(a), Resource: "tokens", Amount: 101}))
	if code(err) != "resource_exhausted" {
		t.Fatalf("consuming 101 of 100: want resource_exhausted, got %v", err)
	}
	s := callSpan(t, exp, "Consume")
	wantAttrs(t, s, AttrAmount.Int64(101), AttrDecision.String(DecisionRefused),
		AttrRefusedBy.String("quota"), AttrRefusedNode.Int64(int64(a)))
	if len(children(exp, s, SpanRecordWait)) == 0 {
		t.Errorf("the refusal's span has no %s child: a refusal waits for the record too", SpanRecordWait)
	}
}

// TestTraceSharedRefusalNamesNoNode: a refusal by a cap above the caller's
// scope (the root's, shared with other tenants) says so and names neither
// that cap's node nor its figures, as the caller's answer does not.
func TestTraceSharedRefusalNamesNoNode(t *testing.T) {
	e, exp := tracedEnv(t)
	ctx := context.Background()
	admin, _ := e.session(adminKey)
	if _, err := admin.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: 1, Resource: "tokens", Value: ptr[int64](10)})); err != nil {
		t.Fatal(err)
	}
	a := e.tenants["a"]
	_, err := e.client(keyA).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(a), Resource: "tokens", Amount: 20}))
	if code(err) != "resource_exhausted" {
		t.Fatalf("consuming 20 under a root cap of 10: want resource_exhausted, got %v", err)
	}
	s := callSpan(t, exp, "Consume")
	wantAttrs(t, s, AttrDecision.String(DecisionRefused), AttrRefusedBy.String("shared"))
	if v, ok := attrs(s)[AttrRefusedNode]; ok {
		t.Errorf("a refusal by a cap above the scope names node %v", v.Emit())
	}
	set := callSpan(t, exp, "SetQuota")
	wantAttrs(t, set, AttrScope.Int64(1))
	if v, ok := attrs(set)[AttrTenant]; ok {
		t.Errorf("the admin's call names tenant %v", v.Emit())
	}
}

// TestTraceContinuesCallersTrace: the call's span is a child of the span
// named by the request's W3C traceparent header.
func TestTraceContinuesCallersTrace(t *testing.T) {
	e, exp := tracedEnv(t)
	caller := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
	h := http.Header{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), caller), propagation.HeaderCarrier(h))
	req := connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(e.tenants["a"]), Resource: "tokens", Amount: 1})
	req.Header().Set("Traceparent", h.Get("Traceparent"))
	if _, err := e.client(keyA).Consume(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	s := callSpan(t, exp, "Consume")
	if s.SpanContext.TraceID() != caller.TraceID() || s.Parent.SpanID() != caller.SpanID() {
		t.Errorf("the call's span is in trace %s under %s; want trace %s under %s",
			s.SpanContext.TraceID(), s.Parent.SpanID(), caller.TraceID(), caller.SpanID())
	}
}

// TestTraceAcquireQueued: an acquire that waited for a slot says it was
// queued and holds a child span for its time in the queue, ended by the
// grant.
func TestTraceAcquireQueued(t *testing.T) {
	e, exp := tracedEnv(t)
	ctx := context.Background()
	holder, held := fill(t, e)
	waiter, _ := e.session(keyA)
	granted := make(chan error, 1)
	go func() {
		granted <- call(waiter.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db", RequestId: "w"})))
	}()
	eventually(t, "the waiter to queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	if err := call(holder.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: held[0]}))); err != nil {
		t.Fatal(err)
	}
	if err := <-granted; err != nil {
		t.Fatal(err)
	}
	var queued []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "governor.v1.GovernorService/Acquire" && attrs(s)[AttrDecision].AsString() == DecisionQueued {
			queued = append(queued, s)
		}
	}
	if len(queued) != 1 {
		t.Fatalf("want one queued acquire among the spans, got %d", len(queued))
	}
	s := queued[0]
	wantAttrs(t, s, AttrTenant.String("a"), AttrNode.Int64(int64(e.tenants["a"])), AttrClass.String("db"))
	q := children(exp, s, SpanQueueWait)
	if len(q) != 1 {
		t.Fatalf("the queued acquire has %d %s children, want 1", len(q), SpanQueueWait)
	}
	wantAttrs(t, q[0], AttrQueueGranted.Bool(true))
	if len(children(exp, s, SpanRecordWait)) == 0 {
		t.Errorf("the queued acquire has no %s child", SpanRecordWait)
	}
}

// TestTraceTryAcquireRefused: a TryAcquire that finds no slot free says it
// was refused by the class's limit.
func TestTraceTryAcquireRefused(t *testing.T) {
	e, exp := tracedEnv(t)
	fill(t, e)
	cl, _ := e.session(keyA)
	err := call(cl.TryAcquire(context.Background(), connect.NewRequest(&governorv1.TryAcquireRequest{Class: "db"})))
	if code(err) != "resource_exhausted" {
		t.Fatalf("a TryAcquire with no slot free: want resource_exhausted, got %v", err)
	}
	s := callSpan(t, exp, "TryAcquire")
	wantAttrs(t, s, AttrClass.String("db"), AttrDecision.String(DecisionRefused), AttrRefusedBy.String("limit"))
}

// TestTraceOffByDefault: a server built without a tracer provider wraps its
// calls in no tracing interceptor, and a call's context carries no span that
// records, even when the caller sends a sampled traceparent.
func TestTraceOffByDefault(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	if e.srv.tracing != nil || len(e.srv.interceptors()) != 1 {
		t.Fatalf("an untraced server has interceptors %v, want only the observer", e.srv.interceptors())
	}
	if sp := recording(trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled, Remote: true,
	}))); sp != nil {
		t.Fatalf("a remote span context alone counts as a recording span")
	}
}

// TestTraceOffAllocatesNothing: on a call that is not traced, what the
// handlers do for tracing allocates nothing.
func TestTraceOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	p := principal{session: 3, scope: 2}
	refusal := &engine.DeniedError{Node: 2, Resource: "tokens", Limit: 10, Requested: 20}
	e := newEnv(t, sqliteURL(t))
	allocs := testing.AllocsPerRun(100, func() {
		e.srv.notePrincipal(ctx, p)
		noteConsume(ctx, p.node(0), "tokens", 20, engine.ConsumeResult{}, refusal)
		noteAcquire(ctx, p.node(5), "db", true, nil)
		refusedNow(ctx, 5, "db")
		RecordWait(ctx, 42)(nil)
		endQueueSpan(queueSpan(ctx), true)
	})
	if allocs != 0 {
		t.Fatalf("an untraced call allocates %v times for tracing, want 0", allocs)
	}
}

// TestTraceRateDecisions: a consume booked for later under a rate cap says
// scheduled with its wait; one beyond max_wait says refused by the rate
// cap on the job, with the wait it needed.
func TestTraceRateDecisions(t *testing.T) {
	e, exp := tracedEnv(t)
	ctx := context.Background()
	cl, _ := e.session(keyA)
	perMinute := &governorv1.Rate{Limit: 10, Period: durationpb.New(time.Minute), Burst: 1, Algorithm: governorv1.RateAlgorithm_RATE_ALGORITHM_LEAKY_BUCKET}
	job, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "job", Rates: map[string]*governorv1.Rate{"vendor": perMinute}}}))
	if err != nil {
		t.Fatal(err)
	}
	id := job.Msg.Node.Id
	consume := func(wait time.Duration) error {
		return call(cl.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: id, Resource: "vendor", Amount: 1, MaxWait: durationpb.New(wait)})))
	}
	for _, wait := range []time.Duration{time.Second, 10 * time.Second, time.Second} {
		_ = consume(wait) // admitted, scheduled at +6s, refused (needs 12s)
	}
	var decided []map[attribute.Key]attribute.Value
	for _, s := range exp.GetSpans() {
		if s.Name == "governor.v1.GovernorService/Consume" {
			decided = append(decided, attrs(s))
		}
	}
	if len(decided) != 3 {
		t.Fatalf("want three Consume spans, got %d", len(decided))
	}
	want := []map[attribute.Key]attribute.Value{
		{AttrDecision: attribute.StringValue(DecisionGranted)},
		{AttrDecision: attribute.StringValue(DecisionScheduled), AttrRetryAfter: attribute.Int64Value(6000)},
		{AttrDecision: attribute.StringValue(DecisionRefused), AttrRefusedBy: attribute.StringValue("rate"),
			AttrRefusedNode: attribute.Int64Value(int64(id)), AttrRetryAfter: attribute.Int64Value(12000)},
	}
	for i, w := range want {
		for k, v := range w {
			if decided[i][k] != v {
				t.Errorf("consume %d: %s = %v, want %v", i, k, decided[i][k].Emit(), v.Emit())
			}
		}
	}
}
