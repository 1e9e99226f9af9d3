package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor/cmd/internal/engine"
)

// TracerName names the tracer of the spans the server starts itself: the
// waits inside a call.
const TracerName = "governor.dev/governor/cmd/internal/server"

// The names of the spans a call may have beneath its own.
const (
	SpanRecordWait = "governor.record.wait" // the wait for the record to hold the call's outcome
	SpanQueueWait  = "governor.queue.wait"  // an Acquire's time in the fair queue
)

// The attributes a call's span carries. They describe only the caller's own
// request and answer, as the caller is told it: a refusal by a cap above
// the caller's scope names no node and no figures of that cap.
const (
	AttrTenant       = attribute.Key("governor.tenant")     // the tenant the caller acts in; absent for the admin key's root scope
	AttrScope        = attribute.Key("governor.scope_id")   // the node the credential confines the caller to: the tenant's node, the root for the admin key
	AttrSession      = attribute.Key("governor.session_id") // the caller's session
	AttrNode         = attribute.Key("governor.node_id")
	AttrResource     = attribute.Key("governor.resource")
	AttrClass        = attribute.Key("governor.class")
	AttrAmount       = attribute.Key("governor.amount")
	AttrDecision     = attribute.Key("governor.decision")   // DecisionGranted, DecisionQueued, DecisionScheduled or DecisionRefused
	AttrRefusedBy    = attribute.Key("governor.refused.by") // "quota", "rate", "limit" (no slot free for TryAcquire) or "shared" (a cap above the scope)
	AttrRefusedNode  = attribute.Key("governor.refused.node_id")
	AttrRetryAfter   = attribute.Key("governor.retry_after_ms")
	AttrRecordSeq    = attribute.Key("governor.record.seq")
	AttrQueueGranted = attribute.Key("governor.queue.granted")
)

// The values of AttrDecision.
const (
	DecisionGranted   = "granted"   // admitted at once
	DecisionQueued    = "queued"    // an Acquire granted after waiting in the queue
	DecisionScheduled = "scheduled" // a consume with max_wait admitted for later
	DecisionRefused   = "refused"   // a cap said no
)

// tracing returns the interceptor that starts a span per call, or nil when
// tp is nil: then nothing is traced and the calls pay nothing for it. The
// span continues the caller's W3C trace context, so a client's span is its
// parent, and no OTel metrics are kept: metrics are Prometheus's.
func tracing(tp trace.TracerProvider) (connect.Interceptor, error) {
	if tp == nil {
		return nil, nil
	}
	return otelconnect.NewInterceptor(
		otelconnect.WithTracerProvider(tp),
		otelconnect.WithPropagator(propagation.TraceContext{}),
		otelconnect.WithTrustRemote(),
		otelconnect.WithoutMetrics(),
	)
}

// recording returns the call's span when it is recorded, and nil when the
// call is not traced, so that callers build attributes only for spans that
// keep them.
func recording(ctx context.Context) trace.Span {
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		return sp
	}
	return nil
}

// notePrincipal records who the call acts as.
func (s *Server) notePrincipal(ctx context.Context, p principal) {
	sp := recording(ctx)
	if sp == nil {
		return
	}
	sp.SetAttributes(AttrScope.Int64(int64(p.scope)), AttrSession.Int64(int64(p.session)))
	if t := s.hub.tenant(p.scope); t != "" {
		sp.SetAttributes(AttrTenant.String(t))
	}
}

// node is the node a call names: id, or the caller's scope for 0, as the
// engine reads it.
func (p principal) node(id engine.ID) engine.ID {
	if id == 0 {
		return p.scope
	}
	return id
}

// noteConsume records a consume's request and what was decided.
func noteConsume(ctx context.Context, node engine.ID, resource string, amount int64, res engine.ConsumeResult, err error) {
	sp := recording(ctx)
	if sp == nil {
		return
	}
	sp.SetAttributes(AttrNode.Int64(int64(node)), AttrResource.String(resource), AttrAmount.Int64(amount))
	switch {
	case err != nil:
		noteRefusal(sp, err)
	case res.Status == engine.Scheduled:
		sp.SetAttributes(AttrDecision.String(DecisionScheduled), AttrRetryAfter.Int64(res.RetryAfter.Milliseconds()))
	default:
		sp.SetAttributes(AttrDecision.String(DecisionGranted))
	}
}

// noteAcquire records an acquire's request and what was decided; queued
// says it waited in the queue.
func noteAcquire(ctx context.Context, node engine.ID, class string, queued bool, err error) {
	sp := recording(ctx)
	if sp == nil {
		return
	}
	sp.SetAttributes(AttrNode.Int64(int64(node)), AttrClass.String(class))
	switch {
	case err != nil:
		noteRefusal(sp, err)
	case queued:
		sp.SetAttributes(AttrDecision.String(DecisionQueued))
	default:
		sp.SetAttributes(AttrDecision.String(DecisionGranted))
	}
}

// noteRefusal records a refusal by a cap; other errors are left to the
// span's status, which the interceptor sets from the answer's code.
func noteRefusal(sp trace.Span, err error) {
	var d *engine.DeniedError
	if !errors.As(err, &d) {
		return
	}
	by := "quota"
	switch {
	case d.Shared:
		by = "shared"
	case d.Rate != nil:
		by = "rate"
	}
	attrs := []attribute.KeyValue{AttrDecision.String(DecisionRefused), AttrRefusedBy.String(by)}
	if !d.Shared {
		attrs = append(attrs, AttrRefusedNode.Int64(int64(d.Node)))
	}
	if d.RetryAfter > 0 {
		attrs = append(attrs, AttrRetryAfter.Int64(d.RetryAfter.Milliseconds()))
	}
	sp.SetAttributes(attrs...)
}

// refusedNow is the refusal TryAcquire answers when no slot is free.
func refusedNow(ctx context.Context, node engine.ID, class string) {
	if sp := recording(ctx); sp != nil {
		sp.SetAttributes(AttrNode.Int64(int64(node)), AttrClass.String(class),
			AttrDecision.String(DecisionRefused), AttrRefusedBy.String("limit"))
	}
}

// RecordWait starts the span of a wait for the record to hold event seq,
// beneath the span of ctx, and returns what ends it with the wait's error.
// When the span of ctx does not record, it starts nothing and allocates
// nothing.
func RecordWait(ctx context.Context, seq uint64) func(error) {
	sp := recording(ctx)
	if sp == nil {
		return noWait
	}
	_, w := sp.TracerProvider().Tracer(TracerName).Start(ctx, SpanRecordWait)
	w.SetAttributes(AttrRecordSeq.Int64(int64(seq)))
	return func(err error) {
		if err != nil {
			w.SetStatus(codes.Error, err.Error())
		}
		w.End()
	}
}

func noWait(error) {}

// queueSpan starts the span of an Acquire's wait in the queue, beneath the
// call's; nil when the call is not traced.
func queueSpan(ctx context.Context) trace.Span {
	sp := recording(ctx)
	if sp == nil {
		return nil
	}
	_, q := sp.TracerProvider().Tracer(TracerName).Start(ctx, SpanQueueWait)
	return q
}

// endQueueSpan ends q, if any, saying whether the wait ended in a grant.
func endQueueSpan(q trace.Span, granted bool) {
	if q != nil {
		q.SetAttributes(AttrQueueGranted.Bool(granted))
		q.End()
	}
}
