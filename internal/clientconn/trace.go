package clientconn

import (
	"context"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// traceContext writes the trace context of each call's context into the
// call's headers, so that governord's span of the call continues the
// caller's trace. With a nil propagator it uses OpenTelemetry's global one,
// read at each call: a no-op until the program sets one, so a program that
// does not use OpenTelemetry sends nothing more.
type traceContext struct{ p propagation.TextMapPropagator }

func (t traceContext) propagator() propagation.TextMapPropagator {
	if t.p != nil {
		return t.p
	}
	return otel.GetTextMapPropagator()
}

func (t traceContext) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		t.propagator().Inject(ctx, propagation.HeaderCarrier(req.Header()))
		return next(ctx, req)
	}
}

func (t traceContext) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		t.propagator().Inject(ctx, propagation.HeaderCarrier(conn.RequestHeader()))
		return conn
	}
}

func (t traceContext) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

var _ connect.Interceptor = traceContext{}
