package governor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
	"governor.dev/governor/internal/testbin"
)

const (
	adminKey = "admin-key-0123456789"
	teamKey  = "team-a-key-0123456789"
)

// governord is the daemon, cmd/governord, run as a process of its own on a
// loopback port, with its record in a SQLite file.
type governord struct {
	p    *testbin.Proc
	addr string
}

// daemonConfig is what a test's governord is configured with;
// startGovernord writes it to a file that governord reads as it reads a
// user's.
type daemonConfig struct {
	dir          string // holds the file, the record and governord's own files
	Listen       string
	DatabaseURL  string // "" keeps the record in memory
	AdminKey     string
	Root         caps
	Tenants      []tenant
	TLS          tlsFiles
	Adaptive     map[string]adaptive
	MinTTL       time.Duration // the shortest session TTL granted
	ReapInterval time.Duration
	Retention    retention
}

// retention is how long ended things are kept; zero is governord's default.
type retention struct{ Nodes time.Duration }

// caps are the root's caps.
type caps struct{ Limits map[string]int64 }

// tenant is one tenant of a daemonConfig.
type tenant struct {
	Name   string
	APIKey string
	Weight int
	Quotas map[string]int64
	Limits map[string]int64
	Rates  map[string]rate
}

// rate is a rate cap; a zero Burst or an empty Algorithm is governord's
// default.
type rate struct {
	Limit     int64
	Per       time.Duration
	Burst     int64
	Algorithm string
}

// tlsFiles is a certificate and its key in PEM files; zero is plain text.
type tlsFiles struct{ CertFile, KeyFile string }

// adaptive is an AIMD controller on a concurrency class.
type adaptive struct {
	Initial, Min, Max int64
	MaxOverloadShare  float64
	Interval          time.Duration
	MinSamples        int
}

// testConfig is a governord with one tenant, team-a, whose sessions may
// be as short as 100ms, recording in dir.
func testConfig(dir string) *daemonConfig {
	return &daemonConfig{
		dir: dir, Listen: "127.0.0.1:0", AdminKey: adminKey,
		DatabaseURL: "sqlite:" + filepath.Join(dir, "governor.db"),
		Tenants: []tenant{{Name: "team-a", APIKey: teamKey, Weight: 1,
			Quotas: map[string]int64{"http": 1 << 40}}},
		MinTTL: 100 * time.Millisecond, ReapInterval: 20 * time.Millisecond,
	}
}

// file is the configuration as governord reads it: JSON, which YAML
// includes.
func (c *daemonConfig) file() ([]byte, error) {
	tenants := make([]map[string]any, len(c.Tenants))
	for i, tn := range c.Tenants {
		rates := map[string]any{}
		for name, r := range tn.Rates {
			rates[name] = r.fields()
		}
		tenants[i] = map[string]any{"name": tn.Name, "api_key": tn.APIKey, "weight": tn.Weight,
			"quotas": tn.Quotas, "limits": tn.Limits, "rates": rates}
	}
	adaptive := map[string]any{}
	for class, a := range c.Adaptive {
		adaptive[class] = map[string]any{"initial": a.Initial, "min": a.Min, "max": a.Max,
			"max_overload_share": a.MaxOverloadShare, "interval": a.Interval.String(), "min_samples": a.MinSamples}
	}
	f := map[string]any{
		"listen": c.Listen, "metrics_listen": "off", "admin_key": c.AdminKey,
		"database_url": c.DatabaseURL,
		"tenants":      tenants, "adaptive": adaptive,
		"sessions":      map[string]string{"min_ttl": c.MinTTL.String()},
		"reap_interval": c.ReapInterval.String(),
		"log":           map[string]string{"format": "json"},
	}
	if c.Root.Limits != nil {
		f["root"] = map[string]any{"limits": c.Root.Limits}
	}
	if c.Retention.Nodes != 0 {
		f["retention"] = map[string]string{"nodes": c.Retention.Nodes.String()}
	}
	if c.TLS != (tlsFiles{}) {
		f["tls"] = map[string]string{"cert_file": c.TLS.CertFile, "key_file": c.TLS.KeyFile}
	}
	return json.Marshal(f)
}

func (r rate) fields() map[string]any {
	f := map[string]any{"limit": r.Limit, "per": r.Per.String()}
	if r.Burst != 0 {
		f["burst"] = r.Burst
	}
	if r.Algorithm != "" {
		f["algorithm"] = r.Algorithm
	}
	return f
}

// startGovernord writes cfg to a file in its directory and runs governord
// on it; the caller stops it.
func startGovernord(cfg *daemonConfig) (*governord, error) {
	bin, err := testbin.Path("governor.dev/governor/cmd/governord")
	if err != nil {
		return nil, err
	}
	data, err := cfg.file()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(cfg.dir, "governor.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	p, err := testbin.Launch(bin, cfg.dir, nil, "-config", path)
	if err != nil {
		return nil, err
	}
	url, err := p.URL(time.Minute)
	if err != nil {
		p.Kill()
		return nil, err
	}
	_, addr, _ := strings.Cut(url, "://")
	return &governord{p: p, addr: addr}, nil
}

// stop stops governord with SIGTERM and fails unless it exits 0.
func (g *governord) stop() error { return g.p.Stop(30 * time.Second) }

// newGovernord starts a governord for t and stops it when t ends.
func newGovernord(t testing.TB) *governord {
	t.Helper()
	return newGovernordWith(t, testConfig(t.TempDir()))
}

func newGovernordWith(t testing.TB, cfg *daemonConfig) *governord {
	t.Helper()
	g, err := startGovernord(cfg)
	if err != nil {
		t.Fatalf("start governord: %v", err)
	}
	t.Cleanup(func() {
		if err := g.stop(); err != nil {
			t.Errorf("stop governord: %v", err)
		}
	})
	return g
}

// dial connects a client of team-a and closes it when t ends.
func dial(t testing.TB, addr string, opts ...Option) *Client {
	t.Helper()
	c, err := Dial(context.Background(), append([]Option{WithAddr(addr), WithAPIKey(teamKey)}, opts...)...)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// task creates a task for t and closes it when t ends.
func task(t testing.TB, c *Client, spec Spec) (context.Context, *Task) {
	t.Helper()
	ctx, task, err := c.NewTask(context.Background(), spec)
	if err != nil {
		t.Fatalf("new task %q: %v", spec.Name, err)
	}
	t.Cleanup(func() { _ = task.Close() })
	return ctx, task
}

// adminAPI is a raw API client on a session of the admin key, for looking
// at and changing what governord holds.
func adminAPI(t testing.TB, addr string) governorv1connect.GovernorServiceClient {
	t.Helper()
	key, err := clientconn.Config{Addr: addr, APIKey: adminKey}.API(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := key.OpenSession(context.Background(), connect.NewRequest(&governorv1.OpenSessionRequest{}))
	if err != nil {
		t.Fatalf("open an admin session: %v", err)
	}
	token := res.Msg.Token
	api, err := clientconn.Config{Addr: addr}.API(func() string { return token })
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// leaseValid asks governord, with the admin key, whether a lease is held.
func leaseValid(t testing.TB, addr string, id uint64) bool {
	t.Helper()
	res, err := adminAPI(t, addr).Validate(context.Background(), connect.NewRequest(&governorv1.ValidateRequest{LeaseId: id}))
	if err != nil {
		t.Fatalf("validate lease %d: %v", id, err)
	}
	return res.Msg.Valid
}

// adminCancel cancels a node with the admin key.
func adminCancel(t testing.TB, addr string, node uint64) error {
	t.Helper()
	_, err := adminAPI(t, addr).CancelNode(context.Background(), connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: node, Reason: "test"}))
	return err
}

// used reads a node's use of a resource with the admin key.
func used(t testing.TB, addr string, node uint64, resource string) int64 {
	t.Helper()
	return describe(t, addr, node).Resources[resource].GetUsed()
}

// describe reads a node with the admin key.
func describe(t testing.TB, addr string, node uint64) *governorv1.NodeInfo {
	t.Helper()
	res, err := adminAPI(t, addr).GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: node}))
	if err != nil {
		t.Fatalf("describe node %d: %v", node, err)
	}
	return res.Msg.Node
}

// done waits for ctx to end, at most within, and returns its cause.
func done(t testing.TB, ctx context.Context, within time.Duration) error {
	t.Helper()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(within):
		t.Fatalf("context still live after %s", within)
	}
	return nil
}

// exampleGovernord starts a governord for an Example and returns its
// address and how to stop it.
func exampleGovernord() (addr string, stop func()) {
	dir, err := os.MkdirTemp("", "governor-example-")
	if err != nil {
		panic(err)
	}
	cfg := testConfig(dir)
	cfg.Tenants[0].Quotas = map[string]int64{"http": 1000, "tool_calls": 100, "retry": 2}
	cfg.Tenants[0].Limits = map[string]int64{"agents": 2, "http": 4}
	cfg.Tenants[0].Rates = map[string]rate{"api": {Limit: 2, Per: time.Second, Burst: 1, Algorithm: "leaky_bucket"}}
	g, err := startGovernord(cfg)
	if err != nil {
		panic(fmt.Sprintf("start governord: %v", err))
	}
	return g.addr, func() {
		_ = g.stop()
		_ = os.RemoveAll(dir)
	}
}

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
