package clientconn

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

func TestURLs(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
		err  string
	}{
		{"one", Config{Addr: "gov:1"}, "http://gov:1", ""},
		{"list", Config{Addr: "gov-a:1, gov-b:1,http://gov-c:2/"}, "http://gov-a:1 http://gov-b:1 http://gov-c:2", ""},
		{"tls list", Config{Addr: "gov-a:1,https://gov-b:1", TLS: true}, "https://gov-a:1 https://gov-b:1", ""},
		{"empty entry", Config{Addr: "gov-a:1,,gov-b:1"}, "", `address list "gov-a:1,,gov-b:1" has an empty entry (number 2); separate host:port addresses with single commas`},
		{"trailing comma", Config{Addr: "gov-a:1,"}, "", "empty entry (number 2)"},
		{"twice", Config{Addr: "gov-a:1,http://gov-a:1"}, "", "names http://gov-a:1 twice; list each governord once"},
		{"bad entry", Config{Addr: "gov-a:1,gov-b"}, "", `address "gov-b" is not host:port`},
		{"bad port", Config{Addr: "gov-a:1,gov-b:0"}, "", `address "gov-b:0" has port "0"`},
		{"mixed schemes", Config{Addr: "gov-a:1,https://gov-b:1"}, "", "mixes http:// and https://"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.cfg.URLs()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrConfig) {
					t.Fatalf("URLs() = %q, %v; want an ErrConfig saying %q", got, err, c.err)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != c.want {
				t.Fatalf("URLs() = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// A node that fails is passed once however many calls saw it fail, and
// a late failure of a node passed does not undo a leader named since; a
// named leader that fails sends the calls on past the last listed node
// held, so that every listed node gets its turn.
func TestRouterMovesOn(t *testing.T) {
	r := newRouter([]string{"http://a:1", "http://b:1", "http://c:1"})
	r.failed("a:1")
	if got := r.target(); got != "b:1" {
		t.Fatalf("after a failed: %s, want b", got)
	}
	r.follow("x:1")
	r.failed("a:1")
	if got := r.target(); got != "x:1" {
		t.Fatalf("after a late failure at a: %s, want x, the leader named since", got)
	}
	r.failed("x:1")
	if got := r.target(); got != "c:1" {
		t.Fatalf("after the leader b named failed: %s, want c, the next after b", got)
	}
	r.failed("c:1")
	if got := r.target(); got != "a:1" {
		t.Fatalf("after c failed: %s, want a, round the list", got)
	}
}

// cutter receives calls and cuts their connections without an answer.
type cutter struct {
	governorv1connect.UnimplementedGovernorServiceHandler
	calls atomic.Int64
}

type connKey struct{}

func (c *cutter) Consume(ctx context.Context, _ *connect.Request[governorv1.ConsumeRequest]) (*connect.Response[governorv1.ConsumeResponse], error) {
	c.calls.Add(1)
	_ = ctx.Value(connKey{}).(net.Conn).Close()
	return nil, connect.NewError(connect.CodeInternal, errors.New("cut"))
}

// serveH2C serves h over plain-text HTTP/2 on a loopback port for t and
// returns its address. Each request's context carries its connection.
func serveH2C(t *testing.T, h http.Handler) string {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &p,
		ConnContext: func(ctx context.Context, nc net.Conn) context.Context { return context.WithValue(ctx, connKey{}, nc) }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func serveCutter(t *testing.T, c *cutter) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(governorv1connect.NewGovernorServiceHandler(c))
	return serveH2C(t, mux)
}

// clusterAPI is an API client of the nodes at addrs, a list, and the
// router its calls share.
func clusterAPI(t *testing.T, addrs string) (governorv1connect.GovernorServiceClient, *router) {
	t.Helper()
	cfg := Config{Addr: addrs}
	hc, err := cfg.Client()
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPClient = hc
	api, err := cfg.API(nil)
	if err != nil {
		t.Fatal(err)
	}
	return api, hc.Transport.(*routed).r
}

// A call sent but not answered is sent again to the next node only when
// that cannot apply it twice: with a request id, up to three passes over
// the list; without one, never.
func TestUnansweredCallsAreRepeatedOnlyWithARequestID(t *testing.T) {
	one, two := &cutter{}, &cutter{}
	api, _ := clusterAPI(t, serveCutter(t, one)+","+serveCutter(t, two))
	ctx := context.Background()
	if _, err := api.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "http", Amount: 1})); err == nil {
		t.Fatal("a consume whose connection was cut succeeded")
	}
	if n := one.calls.Load() + two.calls.Load(); n != 1 {
		t.Fatalf("a consume without a request id was sent %d times, want once", n)
	}
	_, err := api.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "http", Amount: 1, RequestId: "r1"}))
	if connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), "after 6 attempts") {
		t.Fatalf("a consume with a request id cut everywhere: %v; want Unavailable after 6 attempts", err)
	}
	if a, b := one.calls.Load(), two.calls.Load(); a+b != 7 || a < 3 || b < 3 {
		t.Fatalf("calls reached the nodes %d and %d times, want 1 and 6 more, shared", a, b)
	}
}

// A stream refused by a node that names the leader moves the router, so
// that the stream opened again, and every call after it, goes there.
func TestAStreamFollowsTheLeaderItIsNamed(t *testing.T) {
	follower := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := connect.NewError(connect.CodeUnavailable, errors.New("not the leader"))
		err.Meta().Set(LeaderHeader, "127.0.0.1:9")
		_ = connect.NewErrorWriter().Write(w, r, err)
	})
	api, r := clusterAPI(t, serveH2C(t, follower)+",127.0.0.1:8")
	stream, err := api.WatchNode(context.Background(), connect.NewRequest(&governorv1.WatchNodeRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for stream.Receive() {
		t.Fatal("a message from a follower's stream")
	}
	_ = stream.Close()
	if got := r.target(); got != "127.0.0.1:9" {
		t.Fatalf("after the stream was refused by a follower naming 127.0.0.1:9, calls go to %s", got)
	}
}

// Each way an attempt can fail comes to the outcome that decides whether
// the call may be sent again, and moves the router accordingly.
func TestWhatAnAttemptCameTo(t *testing.T) {
	hinted := func(leader string) error {
		err := connect.NewWireError(connect.CodeUnavailable, errors.New("not the leader"))
		err.Meta().Set(LeaderHeader, leader)
		return err
	}
	notApplied := func() error {
		err := connect.NewWireError(connect.CodeUnavailable, errors.New("no leader"))
		err.Meta().Set(NotAppliedHeader, "true")
		return err
	}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	read := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
	for _, c := range []struct {
		name   string
		err    error
		want   outcome
		target string
	}{
		{"leader named", hinted("c:1"), redirected, "c:1"},
		{"a hint that is no address", hinted("c"), unanswered, "b:1"},
		{"refused without a hint", connect.NewWireError(connect.CodeUnavailable, errors.New("shutting down")), unanswered, "b:1"},
		{"refused before the log, no leader known", notApplied(), unsent, "b:1"},
		{"not dialled", connect.NewError(connect.CodeUnavailable, dial), unsent, "b:1"},
		{"cut after sending", connect.NewError(connect.CodeUnavailable, read), unanswered, "b:1"},
		{"an answer", connect.NewWireError(connect.CodePermissionDenied, errors.New("no")), answered, "a:1"},
		{"the caller gave up", connect.NewError(connect.CodeCanceled, context.Canceled), answered, "a:1"},
	} {
		r := newRouter([]string{"http://a:1", "http://b:1"})
		if got := r.after("a:1", c.err); got != c.want || r.target() != c.target {
			t.Errorf("%s: outcome %d, calls go to %s; want %d and %s", c.name, got, r.target(), c.want, c.target)
		}
	}
}

// closeCounter counts CloseIdleConnections.
type closeCounter struct {
	http.RoundTripper
	closed int
}

func (c *closeCounter) CloseIdleConnections() { c.closed++ }

// Closing the idle connections of a cluster's HTTP client closes those of
// the transport it routes through.
func TestRoutedClosesIdleConnections(t *testing.T) {
	base := &closeCounter{}
	hc, err := Config{Addr: "a:1,b:1", HTTPClient: &http.Client{Transport: base}}.Client()
	if err != nil {
		t.Fatal(err)
	}
	hc.CloseIdleConnections()
	if base.closed != 1 {
		t.Fatalf("the base transport closed idle connections %d times, want 1", base.closed)
	}
}
