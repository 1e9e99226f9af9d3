package gubernator

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/grpc/metadata"
)

// callHeader is a call's request header as its transport holds it: an
// HTTP header (Connect's handler and the HTTP JSON paths) or a gRPC call's
// incoming metadata (grpc-go's transport). It is passed by value and
// copies only the values asked for, so reading a call's key costs no
// header map.
type callHeader struct {
	http http.Header     // the HTTP transports' header
	grpc context.Context // or, when http is nil, the gRPC call's context
}

// traceHeader is the header the tracing reads: the HTTP header, or the
// trace context of a gRPC call's metadata, copied only when calls are
// traced.
func (s *Service) traceHeader(h callHeader) http.Header {
	if h.http != nil || s.tracer == nil {
		return h.http
	}
	th := http.Header{}
	for _, k := range [...]string{"Traceparent", "Tracestate"} {
		if v := metadata.ValueFromIncomingContext(h.grpc, strings.ToLower(k)); len(v) > 0 {
			th[k] = v
		}
	}
	return th
}

// authorization is the call's Authorization header.
func (h callHeader) authorization() string {
	if h.http != nil {
		return h.http.Get("Authorization")
	}
	if v := metadata.ValueFromIncomingContext(h.grpc, "authorization"); len(v) > 0 {
		return v[0]
	}
	return ""
}
