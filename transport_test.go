package governor

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

func TestTransportChargesAndHoldsPerRequest(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	var inflight, most atomic.Int64
	status := atomic.Int64{}
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		w.WriteHeader(int(status.Load()))
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	ctx, tk := task(t, c, Spec{Name: "fetch", Quotas: map[string]int64{"http": 12}, Limits: map[string]int64{"http": 2}})
	hc := &http.Client{Transport: Transport(nil)}

	errs := make(chan error, 10)
	for range 10 {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := hc.Do(req)
			if err != nil {
				errs <- err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			errs <- resp.Body.Close()
		}()
	}
	for range 10 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if m := most.Load(); m > 2 {
		t.Fatalf("%d requests at once under an http limit of 2", m)
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 10 {
		t.Fatalf("%d http units used for 10 requests", u)
	}

	// A 503 is overload, still a response; the quota of 12 allows two more.
	status.Store(http.StatusServiceUnavailable)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("503: %v %v", resp, err)
	}
	_ = resp.Body.Close()
	_, _ = hc.Do(mustRequest(t, ctx, srv.URL))
	_, err = hc.Do(mustRequest(t, ctx, srv.URL))
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("the 13th request: %v, want ErrDenied", err)
	}
	if _, err := hc.Do(mustRequest(t, context.Background(), srv.URL)); !errors.Is(err, ErrNoTask) {
		t.Fatalf("a request without a task: %v, want ErrNoTask", err)
	}
}

func TestTransportMaxHoldFreesALeakedBody(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	ctx, tk := task(t, c, Spec{Name: "leak", Limits: map[string]int64{"http": 1}})
	hc := &http.Client{Transport: Transport(nil, WithMaxHold(200*time.Millisecond))}
	if _, err := hc.Do(mustRequest(t, ctx, srv.URL)); err != nil { // body never closed
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := hc.Do(mustRequest(t, ctx, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("the second request did not wait for the leaked lease")
	}
	res, err := adminAPI(t, g.addr).GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: tk.ID()}))
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Msg.Node.Classes["http"].GetHeld(); n != 0 {
		t.Fatalf("%d http leases held after the body was closed", n)
	}
}

func mustRequest(t *testing.T, ctx context.Context, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// Answers that signal overload (a 503, or a Retry-After in seconds or as
// an HTTP date) are reported: governord's adaptive controller of the http
// class cuts the root's limit.
func TestTransportReportsOverload(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		status     int
		retryAfter string
	}{
		{"503", http.StatusServiceUnavailable, ""},
		{"Retry-After in seconds", http.StatusOK, "2"},
		{"Retry-After as a date", http.StatusAccepted, time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			if !limitCut(t, srv.URL) {
				t.Fatalf("the root's http limit did not move after 10s of %s answers", tc.name)
			}
		})
	}
}

// limitCut sends requests through Transport to url under a governord
// whose root's http limit of 8 is adaptive, and reports whether the
// limit moved within 10s.
func limitCut(t *testing.T, url string) bool {
	t.Helper()
	cfg := testConfig(t.TempDir())
	cfg.Root.Limits = map[string]int64{"http": 8}
	cfg.Adaptive = map[string]adaptive{"http": {Initial: 8, Min: 1, Max: 8, MaxOverloadShare: 0.1, Interval: 50 * time.Millisecond, MinSamples: 5}}
	g := newGovernordWith(t, cfg)
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "overloaded"})
	hc := &http.Client{Transport: Transport(nil)}
	admin := adminAPI(t, g.addr)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := hc.Do(mustRequest(t, ctx, url))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		res, err := admin.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: 1}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Msg.Node.Classes["http"].GetLimit() < 8 {
			return true
		}
	}
	return false
}

func TestOverloadedAnswers(t *testing.T) {
	t.Parallel()
	date := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).Format(http.TimeFormat)
	cases := []struct {
		status     int
		retryAfter string
		want       bool
	}{
		{http.StatusOK, "", false},
		{http.StatusTooManyRequests, "", true},
		{http.StatusServiceUnavailable, "", true},
		{http.StatusOK, "120", true},
		{http.StatusInternalServerError, "0", true},
		{http.StatusOK, date, true},
		{http.StatusOK, "Sun, 06 Nov 1994 08:49:37 GMT", true},
		{http.StatusOK, "soon", false},
		{http.StatusOK, "-5", false},
		{http.StatusOK, "1.5", false},
		{http.StatusMovedPermanently, "5", false},
		{http.StatusTooManyRequests, "soon", true},
	}
	for _, tc := range cases {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
		if tc.retryAfter != "" {
			resp.Header.Set("Retry-After", tc.retryAfter)
		}
		if got := overloaded(resp); got != tc.want {
			t.Errorf("%d with Retry-After %q: overloaded %v, want %v", tc.status, tc.retryAfter, got, tc.want)
		}
	}
}
