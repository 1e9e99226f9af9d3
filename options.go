package governor

import (
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"governor.dev/governor/internal/clientconn"
)

// Option changes how Dial connects. Options override the environment.
type Option func(*settings)

// settings is what Dial connects with: the connection and the session.
type settings struct {
	conn   clientconn.Config
	ttl    time.Duration // 0: the server's default
	name   string
	errors []error
}

// WithAddr sets governord's address, host:port or an http(s):// URL, in
// place of GOVERNOR_ADDR (default 127.0.0.1:7600). A comma-separated list
// names the nodes of a cluster: calls go to the node believed to be the
// leader, follow the leader a node names when it is not the leader, and
// move to the next address when a node cannot be reached, within the
// call's context; the session, its tasks and its leases carry on across
// the switch.
func WithAddr(addr string) Option { return func(s *settings) { s.conn.Addr = addr } }

// WithAPIKey sets the API key, in place of GOVERNOR_API_KEY.
func WithAPIKey(key string) Option { return func(s *settings) { s.conn.APIKey = key } }

// WithTLS turns TLS on or off, in place of GOVERNOR_TLS.
func WithTLS(on bool) Option { return func(s *settings) { s.conn.TLS = on } }

// WithCAFile sets the PEM file of the certificates that sign governord's,
// in place of GOVERNOR_CA_FILE; it implies TLS.
func WithCAFile(path string) Option { return func(s *settings) { s.conn.CAFile = path } }

// WithHTTPClient sets the HTTP client every call goes through; TLS and the
// CA file are then the client's business. It must speak HTTP/2 for the
// watch stream.
func WithHTTPClient(hc *http.Client) Option {
	return func(s *settings) {
		if hc == nil {
			s.errors = append(s.errors, fmt.Errorf("%w: WithHTTPClient(nil); pass a client or leave the option out", ErrInvalid))
		}
		s.conn.HTTPClient = hc
	}
}

// WithSessionTTL asks for a session TTL; governord refuses one outside its
// configured range. Heartbeats go three times per TTL.
func WithSessionTTL(ttl time.Duration) Option {
	return func(s *settings) {
		if ttl <= 0 {
			s.errors = append(s.errors, fmt.Errorf("%w: WithSessionTTL(%s); the TTL must be positive", ErrInvalid, ttl))
		}
		s.ttl = ttl
	}
}

// WithPropagator sets how every call writes the trace context of its
// context into its request: propagation.TraceContext{} sends W3C
// traceparent. Without it (or with nil) the calls use OpenTelemetry's
// global propagator, which writes nothing until the program sets one with
// otel.SetTextMapPropagator. governord, when it traces, continues the
// caller's trace: its span of a call is a child of the caller's span.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(s *settings) { s.conn.Propagator = p }
}

// WithClientName names the client in governord's log.
func WithClientName(name string) Option { return func(s *settings) { s.name = name } }

// resolve reads the environment and applies opts on top.
func resolve(opts []Option) (settings, error) {
	conn, err := clientconn.FromEnv()
	if err != nil {
		return settings{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s := settings{conn: conn}
	for _, o := range opts {
		o(&s)
	}
	if len(s.errors) > 0 {
		return settings{}, s.errors[0]
	}
	if _, err := s.conn.BaseURL(); err != nil {
		return settings{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return s, nil
}
