package clientconn

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// How a client of a cluster finds that a node stopped answering: after
// pingAfter without a frame on a connection it pings, and it closes the
// connection when no answer comes within pingTimeout.
const (
	pingAfter   = time.Second
	pingTimeout = time.Second
)

// DefaultAddr is where governord listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7600"

// The environment variables Config reads.
const (
	EnvAddr   = "GOVERNOR_ADDR"
	EnvAPIKey = "GOVERNOR_API_KEY"
	EnvTLS    = "GOVERNOR_TLS"
	EnvCAFile = "GOVERNOR_CA_FILE"
)

// Config says where governord is and how to reach it. The zero value means
// the default address over plain-text HTTP/2 with no credential.
type Config struct {
	// Addr is host:port, or a URL with an http or https scheme, or a
	// comma-separated list of them, the addresses of the nodes of one
	// cluster. With several, calls go to the node believed to be the
	// leader and follow the leader's address when a node names it.
	Addr string
	// APIKey is the credential sent as Authorization: Bearer.
	APIKey string
	// TLS selects HTTPS. A CAFile or an https:// address implies it.
	TLS bool
	// CAFile is a PEM file of the certificates that sign governord's; empty
	// means the system's roots.
	CAFile string
	// HTTPClient, when set, is used as is and TLS and CAFile are ignored.
	HTTPClient *http.Client
	// Propagator writes the trace context of a call's context into its
	// headers (W3C traceparent with propagation.TraceContext). Nil is
	// OpenTelemetry's global propagator, read at each call: it writes
	// nothing until the program sets one with otel.SetTextMapPropagator.
	Propagator propagation.TextMapPropagator
}

// FromEnv returns the configuration the environment describes. A variable
// that is set but malformed is an error, never silently ignored.
func FromEnv() (Config, error) {
	c := Config{
		Addr:   strings.TrimSpace(os.Getenv(EnvAddr)),
		APIKey: strings.TrimSpace(os.Getenv(EnvAPIKey)),
		CAFile: strings.TrimSpace(os.Getenv(EnvCAFile)),
	}
	if v := strings.TrimSpace(os.Getenv(EnvTLS)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("%w: %s=%q is not a boolean; use true or false", ErrConfig, EnvTLS, v)
		}
		c.TLS = b
	}
	return c, nil
}

// BaseURL returns the URL the API is served under, checking the
// address: with a list, the first address's, after checking them all.
func (c Config) BaseURL() (string, error) {
	urls, err := c.URLs()
	if err != nil {
		return "", err
	}
	return urls[0], nil
}

// baseURL returns the URL of one address, host:port or an http(s) URL.
func (c Config) baseURL(addr string) (string, error) {
	scheme := "http"
	if c.TLS || c.CAFile != "" {
		scheme = "https"
	}
	given := addr
	if rest, ok := strings.CutPrefix(addr, "https://"); ok {
		addr, scheme = rest, "https"
	} else if rest, ok := strings.CutPrefix(addr, "http://"); ok {
		if c.TLS || c.CAFile != "" {
			return "", fmt.Errorf("%w: address %q says http:// but TLS is requested; use https:// or host:port", ErrConfig, given)
		}
		addr = rest
	}
	addr = strings.TrimSuffix(addr, "/")
	if err := checkHostPort(addr); err != nil {
		return "", fmt.Errorf("%w: address %q %w", ErrConfig, given, err)
	}
	return scheme + "://" + addr, nil
}

// checkHostPort says what is wrong with addr as host:port, if anything.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("is not host:port (for example %s)", DefaultAddr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("has port %q; a port is a number from 1 to 65535", port)
	}
	return nil
}

// Client returns the HTTP client calls go through: HTTP/2 in both cases
// (h2c in plain text, so gRPC streams work without TLS), TLS 1.3 at least
// when TLS is on. Its own timeout is zero: callers bound calls with
// contexts, and watch streams live long.
//
// With several addresses its transport routes every request to the node
// believed to be the leader, around HTTPClient's own transport when that
// is set; an HTTP client Client returned is returned as is, so that every
// API client made over it shares where the leader is.
func (c Config) Client() (*http.Client, error) {
	urls, err := c.URLs()
	if err != nil {
		return nil, err
	}
	hc := c.HTTPClient
	if hc == nil {
		if hc, err = c.newClient(urls[0], len(urls) > 1); err != nil {
			return nil, err
		}
	}
	if _, ok := hc.Transport.(*routed); ok || len(urls) == 1 {
		return hc, nil
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out := *hc
	out.Transport = &routed{base: base, r: newRouter(urls)}
	return &out, nil
}

// newClient builds the HTTP client of a configuration without one; base
// is the URL of its first address. For a cluster, a connection on which
// nothing arrives for pingAfter is checked with a ping and closed when
// no answer comes within pingTimeout: the calls in flight on a node that
// stopped (paused, cut off) then fail and go to the next node, instead of
// waiting for their context.
func (c Config) newClient(base string, cluster bool) (*http.Client, error) {
	t := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	if cluster {
		t.HTTP2 = &http.HTTP2Config{SendPingTimeout: pingAfter, PingTimeout: pingTimeout}
	}
	if strings.HasPrefix(base, "https://") {
		cfg := &tls.Config{MinVersion: tls.VersionTLS13}
		if c.CAFile != "" {
			pem, err := os.ReadFile(c.CAFile)
			if err != nil {
				return nil, fmt.Errorf("%w: read CA file: %w", ErrConfig, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrConfig, c.CAFile)
			}
			cfg.RootCAs = pool
		}
		t.TLSClientConfig = cfg
	} else {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		t.Protocols = &p
	}
	return &http.Client{Transport: t}, nil
}
