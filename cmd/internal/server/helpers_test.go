package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// The keys of every test: the admin's and two tenants'.
const (
	adminKey = "admin-key-0123456789"
	keyA     = "tenant-a-key-0123456789"
	keyB     = "tenant-b-key-0123456789"
)

// env is one governord in a test: a store, the server, and an h2c listener
// on loopback. Tenants a and b exist; a has 100 tokens and 2 db slots, b
// has 100 tokens.
type env struct {
	t       testing.TB
	url     string
	writer  eventlog.WriterOptions
	clock   *testclock.Clock
	store   *durable.Store
	srv     *Server
	live    atomic.Pointer[Server] // what the store's Committed callback feeds
	http    *httptest.Server
	h2c     *http.Client
	logs    *logSink
	tenants map[string]engine.ID
	tracing trace.TracerProvider // Options.Tracing; nil traces nothing
}

// sqliteURL is a fresh SQLite record in the test's temporary directory.
func sqliteURL(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "governor.db") }

func newEnv(t testing.TB, url string) *env {
	t.Helper()
	return newEnvTraced(t, url, nil)
}

// newEnvTraced is newEnv with its calls traced by tp.
func newEnvTraced(t testing.TB, url string, tp trace.TracerProvider) *env {
	t.Helper()
	e := &env{t: t, url: url, clock: testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), logs: &logSink{}, tracing: tp}
	e.start()
	t.Cleanup(e.stop)
	return e
}

// start opens the store, reconciles the tenants and serves.
func (e *env) start() {
	t := e.t
	t.Helper()
	ctx := context.Background()
	if e.writer.Logger == nil {
		e.writer.Logger = slog.New(e.logs)
	}
	st, err := durable.Open(ctx, durable.Options{
		URL: e.url, Clock: e.clock, Writer: e.writer, Logger: slog.New(e.logs),
		Committed: func(evs []*engine.Event) {
			if s := e.live.Load(); s != nil {
				s.Publish(evs)
			}
		},
	})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	e.store = st
	e.tenants = map[string]engine.ID{}
	for name, quotas := range map[string]map[string]int64{"a": {"tokens": 100}, "b": {"tokens": 100}} {
		spec := engine.Spec{Name: name, Quotas: quotas}
		if name == "a" {
			spec.Limits = map[string]int64{"db": 2}
		}
		c := &engine.Call{}
		inf, _, err := st.Engine.Ensure(c, engine.RootID, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Wait(ctx, c.Seq); err != nil {
			t.Fatal(err)
		}
		e.tenants[name] = inf.ID
	}
	cfg := &config.Config{AdminKey: adminKey, Tenants: []config.Tenant{{Name: "a", APIKey: keyA}, {Name: "b", APIKey: keyB}}}
	tenants := e.tenants
	srv, err := New(Options{
		Store: st, Keys: cfg.MatchKey, Logger: slog.New(e.logs),
		Tenants: func(name string) (engine.ID, bool) { id, ok := tenants[name]; return id, ok },
		TTL:     TTLBounds{Default: 30 * time.Second, Min: time.Second, Max: time.Hour},
		Tracing: e.tracing,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.live.Store(srv)
	e.http = httptest.NewUnstartedServer(srv.Handler())
	e.http.Config.Protocols = new(http.Protocols)
	e.http.Config.Protocols.SetHTTP1(true)
	e.http.Config.Protocols.SetUnencryptedHTTP2(true)
	e.http.Start()
	e.h2c = h2cClient()
}

// h2cClient is an HTTP client speaking HTTP/2 without TLS, with connections
// of its own.
func h2cClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

// stop ends the server, the listener and the store. It may run twice.
func (e *env) stop() {
	if e.srv == nil {
		return
	}
	e.srv.Close()
	e.http.CloseClientConnections()
	e.http.Close()
	e.h2c.CloseIdleConnections()
	e.live.Store(nil)
	if err := e.store.Close(context.Background()); err != nil && !errors.Is(err, eventlog.ErrCommitFailed) {
		e.t.Errorf("close store: %v", err)
	}
	e.srv = nil
}

// restart is a governord restart: everything in memory is lost, the record
// stays.
func (e *env) restart() {
	e.t.Helper()
	e.stop()
	e.start()
}

// consumeJSON posts body to Consume as plain JSON with key A, as curl does,
// decodes the answer into out and returns its status code.
func (e *env) consumeJSON(t testing.TB, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+"/governor.v1.GovernorService/Consume", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+keyA)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode
}

// client is a generated client that sends cred as its bearer credential.
func (e *env) client(cred string, opts ...connect.ClientOption) governorv1connect.GovernorServiceClient {
	opts = append(opts, connect.WithInterceptors(bearerAuth(cred)))
	return governorv1connect.NewGovernorServiceClient(e.h2c, e.http.URL, opts...)
}

// wideNode creates through session, straight in the engine, a node named
// name with n children named c0, c1, ..., waits until the record holds
// them, and returns the node and its children's ids in order.
func (e *env) wideNode(session engine.ID, name string, n int) (engine.ID, []uint64) {
	e.t.Helper()
	c := &engine.Call{Session: session}
	eng := e.store.Engine
	parent, err := eng.Create(c, 0, engine.Spec{Name: name})
	kids := make([]uint64, 0, n)
	for i := 0; i < n && err == nil; i++ {
		var kid engine.NodeInfo
		kid, err = eng.Create(c, parent.ID, engine.Spec{Name: fmt.Sprint("c", i)})
		kids = append(kids, uint64(kid.ID))
	}
	if err == nil {
		err = e.store.Wait(context.Background(), c.Seq)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return parent.ID, kids
}

// session opens a session with key and returns a client that uses it.
func (e *env) session(key string) (governorv1connect.GovernorServiceClient, *governorv1.OpenSessionResponse) {
	e.t.Helper()
	res, err := e.client(key).OpenSession(context.Background(), connect.NewRequest(&governorv1.OpenSessionRequest{ClientName: e.t.Name()}))
	if err != nil {
		e.t.Fatalf("open session: %v", err)
	}
	return e.client(res.Msg.Token), res.Msg
}

// bearerAuth sets the Authorization header of every call.
type bearerAuth string

func (b bearerAuth) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearerAuth) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearerAuth) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// logSink keeps log messages so a test can wait for one.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logSink) WithGroup(string) slog.Handler            { return l }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}

func (l *logSink) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, msg) {
			n++
		}
	}
	return n
}

// eventually waits up to ten seconds for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// code is the status code of err, or "ok".
func code(err error) string {
	if err == nil {
		return "ok"
	}
	return connect.CodeOf(err).String()
}

// detail returns err's first detail of type T.
func detail[T any, PT interface {
	*T
	proto.Message
}](t *testing.T, err error) PT {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("not a Connect error: %v", err)
	}
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		if m, ok := v.(PT); ok {
			return m
		}
	}
	t.Fatalf("no %T detail in %v", PT(nil), err)
	return nil
}

func ptr[T any](v T) *T { return &v }
