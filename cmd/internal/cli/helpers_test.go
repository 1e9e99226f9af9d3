package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/daemon"
	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
	"governor.dev/governor/internal/testbin"
)

// Keys of the test configuration.
const (
	adminKey = "admin-key-0123456789"
	teamAKey = "team-a-key-0123456789" // defaults: 3 tool calls and 1 agent a run, 2 tool calls a subagent
	teamBKey = "team-b-key-0123456789" // no defaults: the hook's flags decide
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// governorBinary builds cmd/governor once per test binary.
func governorBinary(t testing.TB) string {
	t.Helper()
	return testbin.Build(t, "governor.dev/governor/cmd/governor")
}

// testConfig has two tenants on a record at url ("" for memory).
func testConfig(url string) *config.Config {
	cfg := config.Default()
	cfg.Listen, cfg.MetricsListen, cfg.DatabaseURL = "127.0.0.1:0", "", url
	cfg.AdminKey = adminKey
	cfg.Tenants = []config.Tenant{
		{Name: "team-a", APIKey: teamAKey, Weight: 1, Defaults: config.Defaults{
			Quotas:   map[string]int64{"tool_calls": 3, "agents": 1},
			Children: config.Caps{Quotas: map[string]int64{"tool_calls": 2}},
		}},
		{Name: "team-b", APIKey: teamBKey, Weight: 1},
	}
	cfg.ReapInterval = 50 * time.Millisecond
	return cfg
}

func startGovernord(t testing.TB, cfg *config.Config) *daemon.Daemon {
	t.Helper()
	// The command is built first: a cold build takes longer than the
	// sessions a test opens next may live without a heartbeat.
	governorBinary(t)
	d, err := daemon.Start(context.Background(), cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("start governord: %v", err)
	}
	t.Cleanup(func() { stopGovernord(t, d) })
	return d
}

func stopGovernord(t testing.TB, d *daemon.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Errorf("stop governord: %v", err)
	}
}

// result is how one run of the governor binary ended.
type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout: %s\nstderr: %s", r.code, r.took, r.stdout, r.stderr)
}

// governor runs the real binary with env added to a clean environment.
func governor(t *testing.T, env []string, stdin []byte, args ...string) result {
	t.Helper()
	bin := governorBinary(t) // built before the clock starts: a cold build takes minutes
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if err != nil && r.code <= 0 {
		t.Fatalf("governor %v: %v\n%s", args, err, r)
	}
	return r
}

// envFor points the binary at governord with key.
func envFor(d *daemon.Daemon, key string) []string {
	return []string{clientconn.EnvAddr + "=" + d.Addr().String(), clientconn.EnvAPIKey + "=" + key}
}

// payload is a recorded fixture of source's CLI with the ids replaced.
func payload(t testing.TB, file, session, toolUse, agent string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "hook", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["session_id"], m["tool_use_id"] = session, toolUse
	if agent != "" {
		m["agent_id"] = agent
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// admin is a session of the admin key, to check what governord holds.
type admin struct {
	t   *testing.T
	api governorv1connect.GovernorServiceClient
}

func adminOf(t *testing.T, d *daemon.Daemon) *admin {
	t.Helper()
	cfg := clientconn.Config{Addr: d.Addr().String(), APIKey: adminKey}
	key, err := cfg.API(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := key.OpenSession(context.Background(), connect.NewRequest(&governorv1.OpenSessionRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	token := res.Msg.GetToken()
	api, err := cfg.API(func() string { return token })
	if err != nil {
		t.Fatal(err)
	}
	return &admin{t: t, api: api}
}

// child finds the child of parent (0: the root) named name.
func (a *admin) child(parent uint64, name string) *governorv1.NodeInfo {
	a.t.Helper()
	res, err := a.api.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: parent, IncludeChildren: true}))
	if err != nil {
		a.t.Fatal(err)
	}
	for _, c := range res.Msg.GetChildren() {
		if c.GetName() == name {
			return c
		}
	}
	a.t.Fatalf("node %d has no child %q", parent, name)
	return nil
}

// used is what node has used of resource.
func used(n *governorv1.NodeInfo, resource string) int64 { return n.GetResources()[resource].GetUsed() }

func mustContain(t *testing.T, r result, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d\n%s", code, r)
	}
	for _, p := range parts {
		if !strings.Contains(r.stdout+r.stderr, p) {
			t.Fatalf("output lacks %q\n%s", p, r)
		}
	}
}

// leaseOn finds the one lease held on node by reading the tools class's
// holders through Validate of recent ids: the lease ids are the largest
// ids issued, so it walks down from the newest node id.
func leaseOn(t *testing.T, a *admin, node uint64) uint64 {
	t.Helper()
	for id := node + 20; id > node; id-- {
		res, err := a.api.Validate(context.Background(), connect.NewRequest(&governorv1.ValidateRequest{LeaseId: id}))
		if err == nil && res.Msg.GetValid() && res.Msg.GetLease().GetNodeId() == node {
			return id
		}
	}
	t.Fatalf("no lease held on node %d", node)
	return 0
}
