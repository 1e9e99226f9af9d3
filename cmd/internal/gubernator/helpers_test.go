package gubernator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Keys the fake key check knows.
const (
	keyTenant = "tenant-key-0123456789"
	keyAdmin  = "admin-key-0123456789"
	keyOther  = "other-key-0123456789"
)

func matchKey(k string) (string, bool, bool) {
	switch k {
	case keyTenant:
		return "acme", false, true
	case keyAdmin:
		return "", true, true
	case keyOther:
		return "globex", false, true
	}
	return "", false, false
}

// scripted is a Limiter that records the checks it is given and answers
// each with answer.
type scripted struct {
	mu     sync.Mutex
	checks []Check
	answer func(c Check) (Verdict, error)
}

func (l *scripted) Limit(c Check) (Verdict, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checks = append(l.checks, c)
	v, err := l.answer(c)
	return v, uint64(len(l.checks)), err
}

func (l *scripted) seen() []Check {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Check(nil), l.checks...)
}

// memoryRecord is a Record that holds everything at once, and remembers
// the highest sequence number waited for.
type memoryRecord struct {
	mu     sync.Mutex
	waited uint64
	failed chan struct{}
}

func (r *memoryRecord) Room(context.Context) error { return nil }
func (r *memoryRecord) Wait(_ context.Context, seq uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waited = max(r.waited, seq)
	return nil
}
func (r *memoryRecord) Failed() <-chan struct{} { return r.failed }

// fixture is a Service on a real loopback listener that speaks HTTP/1 and
// h2c.
type fixture struct {
	svc      *Service
	observed chan string // "method code" of each observed call
	lim      *scripted
	record   *memoryRecord
	url      string
	addr     string
}

func start(t *testing.T, answer func(c Check) (Verdict, error)) *fixture {
	t.Helper()
	lim := &scripted{answer: answer}
	f := startWith(t, lim)
	f.lim = lim
	return f
}

// startWith is a fixture whose service asks lim.
func startWith(t *testing.T, lim Limiter) *fixture {
	t.Helper()
	return startTraced(t, lim, nil)
}

// startTraced is a fixture whose service asks lim and traces its calls
// with tp (nil: not at all).
func startTraced(t *testing.T, lim Limiter, tp trace.TracerProvider) *fixture {
	t.Helper()
	f := &fixture{record: &memoryRecord{failed: make(chan struct{})}, observed: make(chan string, 16)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	f.url = "http://" + f.addr
	f.svc, err = New(Options{Limiter: lim, Record: f.record, Keys: matchKey, Tenant: "acme", Address: f.addr,
		Logger: slog.New(slog.DiscardHandler), Observe: func(method, code string, _ time.Duration) {
			select { // Observe must not block; a test reads at most a few
			case f.observed <- method + " " + code:
			default:
			}
		}, Tracing: tp})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	f.svc.Register(mux)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: mux, Protocols: &protocols, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return f
}

// under answers every check UNDER_LIMIT with remaining limit-hits.
func under(c Check) (Verdict, error) {
	return Verdict{Limit: c.Limit, Remaining: c.Limit - c.Hits, Reset: time.UnixMilli(1_700_000_000_000)}, nil
}

// post sends body to path with key (none when ""), and returns the status
// and the decoded JSON answer.
func post(t *testing.T, f *fixture, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if compact, err := compactJSON(data); err != nil || !bytes.Equal(compact, data) {
		t.Errorf("the answer is not compact JSON: %s", data)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("answer %q is not JSON: %v", data, err)
	}
	return res.StatusCode, out
}

// jsonOf re-encodes v compactly, for comparisons of whole answers.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
