package sdktest

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor"
	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/daemon"
	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

const (
	adminKey = "admin-key-0123456789"
	teamKey  = "team-a-key-0123456789"
)

// governord is a daemon in this process on a loopback port, with its
// record in a SQLite file.
type governord struct{ addr string }

// newGovernord starts a governord with one tenant, team-a, for t and stops
// it when t ends.
func newGovernord(t testing.TB) *governord { return newTraced(t, nil) }

// newTraced is newGovernord with the API's calls traced by tp; nil traces
// nothing.
func newTraced(t testing.TB, tp trace.TracerProvider) *governord {
	t.Helper()
	cfg := config.Default()
	cfg.Listen, cfg.MetricsListen = "127.0.0.1:0", ""
	cfg.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
	cfg.AdminKey = adminKey
	cfg.Tenants = []config.Tenant{{Name: "team-a", APIKey: teamKey, Weight: 1,
		Quotas: map[string]int64{"http": 1 << 40}}}
	d, err := daemon.Start(context.Background(), cfg, daemon.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ShutdownGrace: time.Second, Tracing: tp,
	})
	if err != nil {
		t.Fatalf("start governord: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop governord: %v", err)
		}
	})
	return &governord{addr: d.Addr().String()}
}

// dial connects a client of team-a, with opts, and closes it when t ends.
func dial(t testing.TB, addr string, opts ...governor.Option) *governor.Client {
	t.Helper()
	c, err := governor.Dial(context.Background(), append([]governor.Option{governor.WithAddr(addr), governor.WithAPIKey(teamKey)}, opts...)...)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// task creates a task for t and closes it when t ends.
func task(t testing.TB, c *governor.Client, spec governor.Spec) (context.Context, *governor.Task) {
	t.Helper()
	ctx, task, err := c.NewTask(context.Background(), spec)
	if err != nil {
		t.Fatalf("new task %q: %v", spec.Name, err)
	}
	t.Cleanup(func() { _ = task.Close() })
	return ctx, task
}

// adminAPI is a raw API client on a session of the admin key.
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

// used reads a node's use of a resource with the admin key.
func used(t testing.TB, addr string, node uint64, resource string) int64 {
	t.Helper()
	res, err := adminAPI(t, addr).GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: node}))
	if err != nil {
		t.Fatalf("describe node %d: %v", node, err)
	}
	return res.Msg.Node.Resources[resource].GetUsed()
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
