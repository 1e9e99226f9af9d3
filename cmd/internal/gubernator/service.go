package gubernator

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
)

// Limiter applies one Check. It returns the verdict and the sequence number
// the record must hold before the verdict, or its error, may be given. A
// *RequestError is that request's answer; a *connect.Error is the call's
// answer as it is (a cluster member's Unavailable); any other error fails
// the call.
// It is called concurrently.
type Limiter interface {
	Limit(c Check) (Verdict, uint64, error)
}

// Record is the durable record as the service waits on it
// (*durable.Store).
type Record interface {
	// Room waits for space in the writer's backlog.
	Room(ctx context.Context) error
	// Wait returns once event seq is on record.
	Wait(ctx context.Context, seq uint64) error
	// Failed is closed once a commit has failed.
	Failed() <-chan struct{}
}

// Options configure a Service.
type Options struct {
	// Limiter applies the checks. Required.
	Limiter Limiter
	// Record is waited on before every answer. Required.
	Record Record
	// Keys checks an API key: the tenant it belongs to, or admin for the
	// admin key (config.MatchKey). Required.
	Keys func(presented string) (tenant string, admin bool, ok bool)
	// Tenant is the tenant the rate limits are kept under; its key and the
	// admin key may call. Required.
	Tenant string
	// Address is governord's API address: HealthCheck's advertise_address
	// and the owner in every answer's metadata.
	Address string
	// Logger receives what the service has to say; nil means
	// slog.Default().
	Logger *slog.Logger
	// Observe, if set, is called after every GetRateLimits call with
	// "GetRateLimits", the status code ("ok", "unauthenticated") and how
	// long the call took. It must not block.
	Observe func(method, code string, d time.Duration)
	// Tracing, if set, gives every GetRateLimits call a span from this
	// provider, continuing the caller's W3C trace context (trace.go). Nil
	// traces nothing.
	Tracing trace.TracerProvider
	// Forward, if set, may pass each GetRateLimits call to a cluster's
	// leader (Forwarder); nil answers every call here.
	Forward Forwarder
}

// Service serves Gubernator's v1 API. Create one with New; it is safe for
// concurrent use.
type Service struct {
	limiter   Limiter
	record    Record
	keys      func(string) (string, bool, bool)
	tenant    string
	address   string
	log       *slog.Logger
	observe   func(method, code string, d time.Duration)
	tracer    trace.Tracer // nil when calls are not traced
	forwarder Forwarder    // nil answers every call here
	rpc       http.Handler // the Connect handler of pb.gubernator.V1
	rpcPath   string

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
}

var _ gubernatorv1connect.V1Handler = (*Service)(nil)

// maxMessageBytes bounds a request message as protobuf, over gRPC and
// HTTP alike: 1000 requests of 1 KiB.
const maxMessageBytes = 1 << 20

// maxJSONBytes bounds the JSON of a request over HTTP, which takes more
// bytes than the same message as protobuf.
const maxJSONBytes = 8 * maxMessageBytes

// Paths of the HTTP JSON API.
const (
	pathGetRateLimits = "/v1/GetRateLimits"
	pathHealthCheck   = "/v1/HealthCheck"
)

// New returns a service for opts.
func New(opts Options) (*Service, error) {
	switch {
	case opts.Limiter == nil:
		return nil, fmt.Errorf("%w: a limiter is required", ErrOptions)
	case opts.Record == nil:
		return nil, fmt.Errorf("%w: a record is required", ErrOptions)
	case opts.Keys == nil:
		return nil, fmt.Errorf("%w: a key check is required", ErrOptions)
	case opts.Tenant == "":
		return nil, fmt.Errorf("%w: the tenant the rate limits are kept under is required", ErrOptions)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Service{
		limiter: opts.Limiter, record: opts.Record, keys: opts.Keys, tenant: opts.Tenant,
		address: opts.Address, log: opts.Logger, observe: opts.Observe, forwarder: opts.Forward, closing: make(chan struct{}),
	}
	if opts.Tracing != nil {
		s.tracer = opts.Tracing.Tracer("governor.dev/governor/cmd/internal/gubernator")
	}
	s.rpcPath, s.rpc = gubernatorv1connect.NewV1Handler(s, connect.WithReadMaxBytes(maxMessageBytes))
	return s, nil
}

// Register adds the service's routes to mux: the gRPC (and gRPC-Web and
// Connect) service under /pb.gubernator.V1/, and the HTTP JSON paths.
func (s *Service) Register(mux *http.ServeMux) {
	mux.Handle(s.rpcPath, s.rpc)
	mux.HandleFunc(pathGetRateLimits, s.httpGetRateLimits)
	mux.HandleFunc(pathHealthCheck, s.httpHealthCheck)
}

// Close makes every later GetRateLimits Unavailable and HealthCheck
// unhealthy. It may be called more than once.
func (s *Service) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// unhealthy says why the service cannot answer, or "" when it can.
func (s *Service) unhealthy() string {
	select {
	case <-s.record.Failed():
		return msgRecordLost
	case <-s.closing:
		return msgStopping
	default:
		return ""
	}
}

// done reports a finished call to Observe.
func (s *Service) done(method string, began time.Time, err error) {
	code := "ok"
	if err != nil {
		c := connect.CodeOf(err)
		code = c.String()
		if c == connect.CodeInternal || c == connect.CodeUnknown {
			s.log.Error("call failed", "method", method, "err", err)
		}
	}
	if s.observe != nil {
		s.observe(method, code, time.Since(began))
	}
}
