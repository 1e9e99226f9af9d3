package gubernator

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"governor.dev/governor/cmd/internal/server"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// traceparent is the W3C header of a sampled caller's span.
func traceparent(caller trace.SpanContext) string {
	h := http.Header{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), caller), propagation.HeaderCarrier(h))
	return h.Get("Traceparent")
}

// overFor answers the check of key "over" OVER_LIMIT and every other one
// UNDER_LIMIT.
func overFor(c Check) (Verdict, error) {
	if c.Key == "over" {
		return Verdict{Status: pb.Status_OVER_LIMIT, Limit: c.Limit, Reset: time.UnixMilli(1_700_000_000_000)}, nil
	}
	return under(c)
}

// TestTraceGetRateLimits: a GetRateLimits call by each transport has one
// span, a child of the caller's, that names the tenant and counts the
// batch's answers, with a child span for the wait for the record.
func TestTraceGetRateLimits(t *testing.T) {
	batch := []*pb.RateLimitReq{
		{Name: "rps", UniqueKey: "under", Hits: 1, Limit: 10, Duration: 1000},
		{Name: "rps", UniqueKey: "over", Hits: 1, Limit: 10, Duration: 1000},
	}
	calls := map[string]func(t *testing.T, f *fixture, tp string){
		"http json": func(t *testing.T, f *fixture, tp string) {
			body := `{"requests":[{"name":"rps","unique_key":"under","hits":1,"limit":10,"duration":1000},{"name":"rps","unique_key":"over","hits":1,"limit":10,"duration":1000}]}`
			req, err := http.NewRequest(http.MethodPost, f.url+pathGetRateLimits, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+keyTenant)
			req.Header.Set("Traceparent", tp)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d", res.StatusCode)
			}
		},
		"connect grpc": func(t *testing.T, f *fixture, tp string) {
			invoke(t, grpcConn(t, f), tp, batch)
		},
		"grpc-go": func(t *testing.T, f *fixture, tp string) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := f.svc.GRPCServer()
			go func() { _ = srv.Serve(ln) }()
			t.Cleanup(srv.Stop)
			conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = conn.Close() })
			invoke(t, conn, tp, batch)
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			f := startTraced(t, &scripted{answer: overFor}, tp)
			caller := trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: trace.TraceID{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}, SpanID: trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9},
				TraceFlags: trace.FlagsSampled,
			})
			call(t, f, traceparent(caller))
			var calls, waits []tracetest.SpanStub
			for _, s := range exp.GetSpans() {
				switch s.Name {
				case SpanGetRateLimits:
					calls = append(calls, s)
				case server.SpanRecordWait:
					waits = append(waits, s)
				}
			}
			if len(calls) != 1 {
				t.Fatalf("want one %s span, got %d", SpanGetRateLimits, len(calls))
			}
			s := calls[0]
			if s.SpanContext.TraceID() != caller.TraceID() || s.Parent.SpanID() != caller.SpanID() {
				t.Errorf("the call's span is in trace %s under %s, want trace %s under %s",
					s.SpanContext.TraceID(), s.Parent.SpanID(), caller.TraceID(), caller.SpanID())
			}
			got := map[attribute.Key]attribute.Value{}
			for _, kv := range s.Attributes {
				got[kv.Key] = kv.Value
			}
			for _, kv := range []attribute.KeyValue{AttrTenant.String("acme"), AttrRequests.Int(2), AttrOverLimit.Int(1), AttrRequestErrors.Int(0)} {
				if got[kv.Key] != kv.Value {
					t.Errorf("%s = %v, want %v", kv.Key, got[kv.Key].Emit(), kv.Value.Emit())
				}
			}
			if len(waits) != 1 || waits[0].Parent.SpanID() != s.SpanContext.SpanID() {
				t.Errorf("want one %s span beneath the call's, got %d", server.SpanRecordWait, len(waits))
			}
		})
	}
}

// invoke calls GetRateLimits over conn with the tenant's key and the
// traceparent tp.
func invoke(t *testing.T, conn *grpc.ClientConn, tp string, batch []*pb.RateLimitReq) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(withKey(ctx, keyTenant), "traceparent", tp)
	if err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", &pb.GetRateLimitsReq{Requests: batch}, &pb.GetRateLimitsResp{}); err != nil {
		t.Fatal(err)
	}
}

// TestTraceOffWithoutProvider: a service built without a tracer provider
// has no tracer, and its calls start no span.
func TestTraceOffWithoutProvider(t *testing.T) {
	f := start(t, under)
	if f.svc.tracer != nil {
		t.Fatalf("a service without Tracing has tracer %v", f.svc.tracer)
	}
	ctx, end := f.svc.traceCall(context.Background(), http.Header{"Traceparent": {traceparent(trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled,
	}))}})
	defer end(&pb.GetRateLimitsResp{}, nil)
	if trace.SpanFromContext(ctx).IsRecording() {
		t.Fatal("an untraced call's context holds a recording span")
	}
}
