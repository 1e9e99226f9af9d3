package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.uber.org/goleak"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

func TestPlaintextBeyondLoopbackIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		listen string
		tls    bool
		allow  bool
		refuse bool
	}{
		{"every interface", "0.0.0.0:0", false, false, true},
		{"every IPv6 interface", "[::]:0", false, false, true},
		{"no host", ":7600", false, false, true},
		{"a private address", "10.1.2.3:7600", false, false, true},
		{"a host name", "governor.internal:7600", false, false, true},
		{"loopback", "127.0.0.1:0", false, false, false},
		{"IPv6 loopback", "[::1]:0", false, false, false},
		{"localhost", "localhost:0", false, false, false},
		{"with TLS", "0.0.0.0:0", true, false, false},
		{"allowed in plain text", "0.0.0.0:0", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig("")
			cfg.Listen, cfg.AllowPlaintext = tc.listen, tc.allow
			if tc.tls {
				cfg.TLS = config.TLS{CertFile: "server.crt", KeyFile: "server.key"}
			}
			err := checkPlaintext(cfg)
			if got := errors.Is(err, ErrPlaintext); got != tc.refuse {
				t.Fatalf("checkPlaintext(%q) = %v, refuse %v", tc.listen, err, tc.refuse)
			}
			if !tc.refuse {
				return
			}
			// Start refuses before it binds or opens anything, whatever
			// the configuration's own validation says.
			d, err := Start(context.Background(), cfg, Options{Logger: quietLog()})
			if !errors.Is(err, ErrPlaintext) || d != nil {
				t.Fatalf("Start on %q: %v, want ErrPlaintext", tc.listen, err)
			}
		})
	}
}

func TestCapChangedAtRunTimeSurvivesRestart(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
	ctx := context.Background()
	cfg := testConfig(url)
	cfg.Tenants[0].Defaults = config.Defaults{Quotas: map[string]int64{"http": 10}}
	d := startDaemon(t, cfg, Options{})
	api := newJSONAPI(d.URL())
	admin, err := api.session(ctx, testAdminKey)
	must(t, err)
	tenant := uint64(d.tenants["team-a"])
	must(t, api.call(ctx, admin, "SetQuota", map[string]any{"node_id": tenant, "resource": "http", "value": 123}, nil))
	must(t, api.call(ctx, admin, "SetDefaults", map[string]any{"node_id": tenant,
		"defaults": map[string]any{"quotas": map[string]int64{"http": 4}}}, nil))
	must(t, d.Stop(ctx))

	d = startDaemon(t, cfg, Options{}) // the same file
	api = newJSONAPI(d.URL())
	admin, err = api.session(ctx, testAdminKey)
	must(t, err)
	res, err := api.node(ctx, admin, tenant)
	must(t, err)
	if c := res["http"].Cap; c == nil || *c != 123 {
		t.Fatalf("after a restart with the same file, team-a's http cap is %v, want 123 as set at run time", c)
	}
	inf := describe(t, d.store, engine.ID(tenant))
	if inf.Defaults.Quotas["http"] != 4 {
		t.Fatalf("after a restart, team-a's defaults are %+v, want those set at run time (http 4)", inf.Defaults)
	}
}

func TestReaperEndsALapsedSessionWithoutACall(t *testing.T) {
	clock := testclock.New(time.Unix(1_800_000_000, 0))
	cfg := testConfig("")
	cfg.ReapInterval = 10 * time.Millisecond
	d := startDaemon(t, cfg, Options{Clock: clock})
	ctx := context.Background()
	api := newJSONAPI(d.URL())
	var opened struct {
		Token string `json:"token"`
	}
	must(t, api.call(ctx, testTeamKey, "OpenSession", map[string]any{"ttl": "2s"}, &opened))
	must(t, api.call(ctx, opened.Token, "Acquire", map[string]any{"class": "db"}, nil))
	tenant := d.tenants["team-a"]
	held := func() int64 { return describe(t, d.store, tenant).Limits["db"].Held }
	if held() != 1 {
		t.Fatalf("held %d after the acquire, want 1", held())
	}
	clock.Advance(3 * time.Second) // the session lapses; no call names it
	deadline := time.Now().Add(10 * time.Second)
	for held() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the lapsed session's lease is still held: the reaper did not run")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a log destination tests read while the daemon writes.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMemoryRecordIsAnnouncedInTheStructuredLog(t *testing.T) {
	cfg := testConfig("")
	cfg.Log = config.Log{Level: "info", Format: "json"}
	var out syncBuffer
	d, err := Start(context.Background(), cfg, Options{LogOutput: &out})
	must(t, err)
	must(t, d.Stop(context.Background()))
	var warned, serving bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		msg, _ := rec["msg"].(string)
		warned = warned || rec["level"] == "WARN" && strings.Contains(msg, "IN MEMORY")
		serving = serving || msg == "serving" && rec["record"] == redactURL("")
	}
	if !warned || !serving {
		t.Fatalf("log without the in-memory warning (%v) or the serving line naming the record (%v):\n%s", warned, serving, out.String())
	}
}

func TestMetricsHaveTheirOwnListener(t *testing.T) {
	cfg := testConfig("")
	cfg.MetricsListen = "localhost:0"
	d := startDaemon(t, cfg, Options{})
	resp, err := http.Get("http://" + d.MetricsAddr().String() + "/metrics")
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "governor_") {
		t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, body)
	}
	if off := startDaemon(t, testConfig(""), Options{}); off.MetricsAddr() != nil {
		t.Fatalf("metrics_listen empty, yet metrics listen on %s", off.MetricsAddr())
	}
}

func TestGRPCWorksOverPlaintextHTTP2(t *testing.T) {
	d := startDaemon(t, testConfig(""), Options{})
	client := governorv1connect.NewGovernorServiceClient(h2cClient(), d.URL(), connect.WithGRPC())
	req := connect.NewRequest(&governorv1.ConsumeRequest{Resource: "http", Amount: 5})
	req.Header().Set("Authorization", "Bearer "+testTeamKey)
	resp, err := client.Consume(context.Background(), req)
	must(t, err)
	if resp.Msg.Remaining == nil || *resp.Msg.Remaining != 1_000_000-5 {
		t.Fatalf("remaining %v after consuming 5 of 1,000,000", resp.Msg.Remaining)
	}
}

func TestStopLeavesNoGoroutineBehind(t *testing.T) {
	before := goleak.IgnoreCurrent()
	cfg := testConfig("sqlite:" + filepath.Join(t.TempDir(), "governor.db"))
	cfg.MetricsListen = "localhost:0"
	cfg.Adaptive = map[string]config.Adaptive{"db": {Initial: 2, Min: 1, Max: 4, Interval: 10 * time.Millisecond, MinSamples: 1}}
	d, err := Start(context.Background(), cfg, Options{Logger: quietLog()})
	must(t, err)
	api := newJSONAPI(d.URL())
	must(t, api.consume(context.Background(), testTeamKey, 0, "http", 1))
	api.client.CloseIdleConnections()
	must(t, d.Stop(context.Background()))
	goleak.VerifyNone(t, before)
}
