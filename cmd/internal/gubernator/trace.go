package gubernator

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor/cmd/internal/server"
	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
)

// SpanGetRateLimits names the span of every GetRateLimits call, whichever
// transport it came by.
const SpanGetRateLimits = gubernatorv1connect.V1GetRateLimitsProcedure

// The attributes of a GetRateLimits span: the tenant the limits are kept
// under, and how the batch was answered. Names and unique keys are left
// out: they are the caller's own identifiers, such as account numbers.
const (
	AttrTenant        = server.AttrTenant
	AttrRequests      = attribute.Key("governor.requests")       // requests in the batch
	AttrOverLimit     = attribute.Key("governor.over_limit")     // answered OVER_LIMIT
	AttrRequestErrors = attribute.Key("governor.request_errors") // answered with an error of their own
	AttrCode          = attribute.Key("rpc.response.status_code")
)

// traceCall starts the span of a GetRateLimits call, continuing the W3C
// trace context of its header h, and returns what ends it with the
// call's answer. One span per call for the three transports (Connect's
// handler, grpc-go's and the HTTP JSON paths), all of which come through
// getRateLimits. Without a tracer it starts nothing.
func (s *Service) traceCall(ctx context.Context, h http.Header) (context.Context, func(*gubernatorv1.GetRateLimitsResp, error)) {
	if s.tracer == nil {
		return ctx, noTrace
	}
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
	ctx, sp := s.tracer.Start(ctx, SpanGetRateLimits, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(AttrTenant.String(s.tenant)))
	return ctx, func(res *gubernatorv1.GetRateLimitsResp, err error) {
		if err != nil {
			sp.SetAttributes(AttrCode.String(connect.CodeOf(err).String()))
			sp.SetStatus(codes.Error, err.Error())
		} else {
			over, failed := 0, 0
			for _, r := range res.Responses {
				switch {
				case r.Error != "":
					failed++
				case r.Status == gubernatorv1.Status_OVER_LIMIT:
					over++
				}
			}
			sp.SetAttributes(AttrRequests.Int(len(res.Responses)), AttrOverLimit.Int(over), AttrRequestErrors.Int(failed))
		}
		sp.End()
	}
}

func noTrace(*gubernatorv1.GetRateLimitsResp, error) {}
