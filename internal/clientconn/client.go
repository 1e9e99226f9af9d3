package clientconn

import (
	"context"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// Credential returns the bearer credential for one call: an API key, or a
// session token once a session is open. It is asked on every call, so a
// caller can switch credentials without a new client.
type Credential func() string

// API returns a client of governord's service over the configuration's
// HTTP client. cred supplies the Authorization header of every call and
// stream; nil sends the configuration's API key. Every call and stream also
// carries the trace context of its context, written by the configuration's
// Propagator. With several addresses, every call goes to the node
// believed to be the leader and follows the leader as follow says; the
// clients made over one HTTP client (see Client) share that belief.
func (c Config) API(cred Credential, opts ...connect.ClientOption) (governorv1connect.GovernorServiceClient, error) {
	base, err := c.BaseURL()
	if err != nil {
		return nil, err
	}
	hc, err := c.Client()
	if err != nil {
		return nil, err
	}
	if cred == nil {
		key := c.APIKey
		cred = func() string { return key }
	}
	interceptors := []connect.Interceptor{bearer(cred), traceContext{c.Propagator}}
	if rt, ok := hc.Transport.(*routed); ok {
		interceptors = append([]connect.Interceptor{follow{rt.r}}, interceptors...)
	}
	opts = append([]connect.ClientOption{connect.WithInterceptors(interceptors...)}, opts...)
	return governorv1connect.NewGovernorServiceClient(hc, base, opts...), nil
}

// bearer sets Authorization: Bearer on every unary call and stream.
type bearer Credential

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if v := b(); v != "" {
			req.Header().Set("Authorization", "Bearer "+v)
		}
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		if v := b(); v != "" {
			conn.RequestHeader().Set("Authorization", "Bearer "+v)
		}
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

var _ connect.Interceptor = bearer(nil)
