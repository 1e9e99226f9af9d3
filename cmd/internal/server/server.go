package server

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// Options configure a Server.
type Options struct {
	// Store is the engine and its record of a single governord. Either it
	// or Backend is required.
	Store *durable.Store
	// Backend, if set, is served from instead of Store: a cluster member
	// (Replicated).
	Backend Backend
	// Keys checks an API key: the tenant it belongs to, or admin for the
	// admin key (config.MatchKey). Required.
	Keys func(presented string) (tenant string, admin bool, ok bool)
	// Tenants maps a tenant's name to its node. The daemon reconciles the
	// tenants before serving. Nil: tenant keys cannot be used.
	Tenants func(name string) (engine.ID, bool)
	// TTL bounds the session TTLs OpenSession grants. The zero value means
	// 30s by default, between 1s and 1h.
	TTL TTLBounds
	// Logger receives what the server has to say; nil means slog.Default().
	Logger *slog.Logger
	// Observe, if set, is called after every GovernorService call with the
	// method's name ("Consume"), the status code ("ok", "resource_exhausted")
	// and how long the call took. It must not block.
	Observe func(method, code string, d time.Duration)
	// Reflect names further gRPC services served beside this one on the
	// same port (the Gubernator-compatible pb.gubernator.V1), which server
	// reflection lists with GovernorService and health. Their descriptors
	// must be registered in protoregistry.GlobalFiles, as generated code does.
	Reflect []string
	// Tracing, if set, gives every call a span from this provider, continuing
	// the caller's W3C trace context, with the call's node, decision and
	// waits (trace.go). Nil traces nothing, at no cost to the calls.
	Tracing trace.TracerProvider
}

// TTLBounds are the TTL granted when a client asks for none and the range a
// client may ask for.
type TTLBounds struct {
	Default, Min, Max time.Duration
}

// Server serves GovernorService. Create one with New; it is safe for
// concurrent use.
type Server struct {
	store   Backend
	keys    func(string) (string, bool, bool)
	tenants func(string) (engine.ID, bool)
	ttl     TTLBounds
	log     *slog.Logger
	observe func(method, code string, d time.Duration)
	reflect []string
	tracing connect.Interceptor // nil when calls are not traced
	handler http.Handler
	hub     *hub
	queue   *hubQueue // feeds hub off the writer goroutine
	flights flights
	floor   recordFloor              // how soon a grant can be recorded, for acquire's deadline
	pages   shelf[[]engine.NodeInfo] // the memory of engine pages of children, for the next GetNode
	wires   shelf[*wirePage]         // the memory of answers' pages of children, for the next GetNode

	principals sync.Mutex // serialises opening key principals' sessions

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
}

var _ governorv1connect.GovernorServiceHandler = (*Server)(nil)

// maxMessageBytes bounds a request message.
const maxMessageBytes = 1 << 20

// compressMinBytes is the smallest response that is compressed for a client
// that accepts it. Nearly every answer is a few dozen bytes, for which
// setting up a gzip writer costs more CPU than the bytes it saves on the
// wire (measured: gzip set-up was about a tenth of the CPU of a loopback
// consume); longer answers are still compressed.
const compressMinBytes = 1024

// newGzipReader and newFastGzipWriter are gzip for connect, answers
// compressed at the fastest level: a page of 1,000 children took 2.3 ms of
// uninterrupted CPU at the default level, most of it compressing, and
// whatever waited for that processor (another tenant's call among them)
// waited that long.
func newGzipReader() connect.Decompressor { return &gzip.Reader{} }

func newFastGzipWriter() connect.Compressor {
	w, err := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	if err != nil {
		panic(err) // BestSpeed is a valid level
	}
	return w
}

// New returns a server for opts.Store. The daemon wires the store's
// Committed callback to Publish; WatchNode streams depend on it. A cluster
// member's backend (Replicated) feeds them itself.
func New(opts Options) (*Server, error) {
	if opts.Backend == nil && opts.Store != nil {
		opts.Backend = Single(opts.Store)
	}
	if opts.Backend == nil {
		return nil, fmt.Errorf("%w: a store or a backend is required", ErrOptions)
	}
	if opts.Keys == nil {
		return nil, fmt.Errorf("%w: a key check is required", ErrOptions)
	}
	ttl, err := opts.TTL.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.Tenants == nil {
		opts.Tenants = func(string) (engine.ID, bool) { return 0, false }
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{
		store: opts.Backend, keys: opts.Keys, tenants: opts.Tenants,
		ttl: ttl, log: opts.Logger, observe: opts.Observe, reflect: opts.Reflect, closing: make(chan struct{}),
	}
	dump := s.store.Local().Dump()
	if err := s.store.Wait(context.Background(), dump.Seq); err != nil {
		return nil, fmt.Errorf("wait for the record to reach event %d: %w", dump.Seq, err)
	}
	if s.tracing, err = tracing(opts.Tracing); err != nil {
		return nil, fmt.Errorf("%w: tracing: %w", ErrOptions, err)
	}
	s.hub = newHub(dump, s.log)
	s.queue = newHubQueue(s.hub, s.store.Local())
	if f, ok := s.store.(feeding); ok {
		f.feed(hubFeed{s})
	}
	s.handler = s.routes()
	return s, nil
}

func (b TTLBounds) withDefaults() (TTLBounds, error) {
	if b == (TTLBounds{}) {
		return TTLBounds{Default: 30 * time.Second, Min: time.Second, Max: time.Hour}, nil
	}
	if b.Min <= 0 || b.Min > b.Default || b.Default > b.Max {
		return b, fmt.Errorf("%w: session TTLs need 0 < min <= default <= max, got min %s, default %s, max %s",
			ErrOptions, b.Min, b.Default, b.Max)
	}
	return b, nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	opts := []connect.HandlerOption{connect.WithReadMaxBytes(maxMessageBytes), connect.WithCompressMinBytes(compressMinBytes),
		connect.WithCompression("gzip", newGzipReader, newFastGzipWriter)}
	own := append(append(opts[:len(opts):len(opts)], strictJSONCodecs...), connect.WithInterceptors(s.interceptors()...))
	path, h := governorv1connect.NewGovernorServiceHandler(s, own...)
	mux.Handle(path, s.lendingPages(h))
	mux.Handle(grpchealth.NewHandler(health{s}, opts...))
	reflector := grpcreflect.NewStaticReflector(append([]string{governorv1connect.GovernorServiceName, grpchealth.HealthV1ServiceName}, s.reflect...)...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector, opts...))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector, opts...))
	return mux
}

// interceptors wrap every GovernorService call: the span first, when calls
// are traced, so that the observer's time and log fall inside it.
func (s *Server) interceptors() []connect.Interceptor {
	if s.tracing == nil {
		return []connect.Interceptor{observer{s}}
	}
	return []connect.Interceptor{s.tracing, observer{s}}
}

// Handler serves GovernorService (gRPC, gRPC-Web and Connect's JSON and
// binary protocols), grpc.health.v1 and server reflection. Plaintext gRPC
// needs HTTP/2 without TLS: serve it with http.Protocols allowing
// UnencryptedHTTP2.
func (s *Server) Handler() http.Handler { return s.handler }

// Publish hands the server events that are on record, in order, as the
// store's Committed callback does. It feeds WatchNode streams, which a
// goroutine of the hub's own then tells (hubqueue.go): it returns at once,
// unless the hub is feedBehind events behind, and then waits for it to
// catch up. A watcher too far behind is closed with Unavailable. It keeps
// no event past its return.
func (s *Server) Publish(evs []*engine.Event) { s.queue.publish(evs) }

// Close ends open WatchNode streams and waiting Acquires with Unavailable,
// and makes every later call Unavailable. It may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// closed reports whether Close was called.
func (s *Server) closed() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// health answers the gRPC health check: serving until Close or a failed
// commit.
type health struct{ s *Server }

func (h health) Check(_ context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if req.Service != "" && req.Service != governorv1connect.GovernorServiceName {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %q", req.Service))
	}
	select {
	case <-h.s.store.Failed():
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	default:
	}
	if h.s.closed() {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}
