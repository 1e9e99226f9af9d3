package governor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor/internal/clientconn"
	"governor.dev/governor/internal/config"
	"governor.dev/governor/internal/daemon"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
	"governor.dev/governor/internal/testbin"
)

const (
	adminKey = "admin-key-0123456789"
	teamKey  = "team-a-key-0123456789"
)

// governord is a daemon in this process on a loopback port, with its
// record in a SQLite file.
type governord struct {
	d    *daemon.Daemon
	cfg  *config.Config
	addr string
}

// testConfig is a governord with one tenant, team-a, whose sessions may
// be as short as 100ms, recording in dir.
func testConfig(dir string) *config.Config {
	cfg := config.Default()
	cfg.Listen, cfg.MetricsListen = "127.0.0.1:0", ""
	cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "governor.db")
	cfg.AdminKey = adminKey
	cfg.Tenants = []config.Tenant{{Name: "team-a", APIKey: teamKey, Weight: 1,
		Quotas: map[string]int64{"http": 1 << 40}}}
	cfg.Sessions.MinTTL = 100 * time.Millisecond
	cfg.ReapInterval = 20 * time.Millisecond
	return cfg
}

// startGovernord starts a governord on cfg; it is stopped when it is
// stopped or when the process ends, whichever is first.
func startGovernord(cfg *config.Config) (*governord, error) { return startTraced(cfg, nil) }

// startTraced is startGovernord with the API's calls traced by tp; nil
// traces nothing.
func startTraced(cfg *config.Config, tp trace.TracerProvider) (*governord, error) {
	d, err := daemon.Start(context.Background(), cfg, daemon.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ShutdownGrace: time.Second, Tracing: tp,
	})
	if err != nil {
		return nil, err
	}
	return &governord{d: d, cfg: cfg, addr: d.Addr().String()}, nil
}

func (g *governord) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return g.d.Stop(ctx)
}

// newGovernord starts a governord for t and stops it when t ends.
func newGovernord(t testing.TB) *governord {
	t.Helper()
	return newGovernordWith(t, testConfig(t.TempDir()))
}

func newGovernordWith(t testing.TB, cfg *config.Config) *governord {
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
	cfg.Tenants[0].Rates = map[string]config.Rate{"api": {Limit: 2, Per: time.Second, Burst: 1, Algorithm: "leaky_bucket"}}
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
