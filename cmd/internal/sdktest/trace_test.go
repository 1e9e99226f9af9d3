package sdktest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor"
)

// tracedGovernord is a governord whose calls are traced into an in-memory
// exporter, which the test reads.
func tracedGovernord(t *testing.T) (*governord, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return newTraced(t, tp), exp
}

// callerSpan is a sampled span context as a caller's tracer would put in
// its context.
func callerSpan() trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{0xb1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
}

// consumeSpans are governord's spans of Consume calls.
func consumeSpans(exp *tracetest.InMemoryExporter) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "governor.v1.GovernorService/Consume" {
			out = append(out, s)
		}
	}
	return out
}

// consumeIn consumes one unit of http in a new task under ctx.
func consumeIn(t *testing.T, ctx context.Context, c *governor.Client) {
	t.Helper()
	tctx, task, err := c.NewTask(ctx, governor.Spec{Name: "traced"})
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	if _, err := governor.Consume(tctx, governor.ResourceHTTP, 1); err != nil {
		t.Fatal(err)
	}
}

// TestTraceContextReachesGovernord: the span in the caller's context is the
// parent of governord's span of the call, across a real HTTP connection.
func TestTraceContextReachesGovernord(t *testing.T) {
	g, exp := tracedGovernord(t)
	c := dial(t, g.addr, governor.WithPropagator(propagation.TraceContext{}))
	caller := callerSpan()
	consumeIn(t, trace.ContextWithSpanContext(context.Background(), caller), c)
	spans := consumeSpans(exp)
	if len(spans) != 1 {
		t.Fatalf("want one Consume span, got %d", len(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID() != caller.TraceID() || s.Parent.SpanID() != caller.SpanID() || !s.Parent.IsRemote() {
		t.Fatalf("governord's span is in trace %s under %s (remote %v); want trace %s under the caller's %s",
			s.SpanContext.TraceID(), s.Parent.SpanID(), s.Parent.IsRemote(), caller.TraceID(), caller.SpanID())
	}
}

// TestTraceContextFollowsTheGlobalPropagator: without WithPropagator the
// client sends nothing until the program sets OpenTelemetry's global
// propagator, and the trace context once it has. It changes process-wide
// state, so it runs alone, and leaves a propagator that writes nothing.
func TestTraceContextFollowsTheGlobalPropagator(t *testing.T) {
	g, exp := tracedGovernord(t)
	c := dial(t, g.addr)
	caller := callerSpan()
	ctx := trace.ContextWithSpanContext(context.Background(), caller)

	consumeIn(t, ctx, c)
	if spans := consumeSpans(exp); len(spans) != 1 || spans[0].SpanContext.TraceID() == caller.TraceID() {
		t.Fatalf("with no propagator set, want one Consume span in a trace of its own, got %+v", spans)
	}

	otel.SetTextMapPropagator(propagation.TraceContext{})
	// OTel's global cannot be given back its first value; an empty
	// composite propagator writes nothing, as that one does.
	defer otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	exp.Reset()
	consumeIn(t, ctx, c)
	if spans := consumeSpans(exp); len(spans) != 1 || spans[0].Parent.SpanID() != caller.SpanID() {
		t.Fatalf("with the global propagator set, want one Consume span under the caller's, got %+v", spans)
	}
}
