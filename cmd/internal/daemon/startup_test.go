package daemon

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
	"governor.dev/governor/internal/gen/gubernator/v1/gubernatorv1connect"
)

// busyAddr holds a loopback port for the test's lifetime.
func busyAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// dirEntries lists dir's names.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A second governord on a busy port is a mistake of the settings: exit 2,
// and neither the record nor the keys file is created.
func TestBusyPortExitsTwoAndCreatesNothing(t *testing.T) {
	busy := busyAddr(t)
	for _, tc := range []struct{ name, listen, metrics string }{
		{"API", busy, "127.0.0.1:0"},
		{"metrics", "127.0.0.1:0", busy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := startProc(t, dir, nil, "-listen", tc.listen, "-metrics-listen", tc.metrics)
			if code := p.Wait(30 * time.Second); code != ExitUsage {
				t.Fatalf("exit code %d, want %d\n%s", code, ExitUsage, p.Output())
			}
			if !strings.Contains(p.Output(), busy) || !strings.Contains(p.Output(), "nothing was started") {
				t.Fatalf("output does not name %s and say nothing was started:\n%s", busy, p.Output())
			}
			if names := dirEntries(t, dir); len(names) != 0 {
				t.Fatalf("the failed start left %q behind", names)
			}
		})
	}
}

// The banner of a restart tells what the record holds, not the file.
func TestWelcomePrintsTheRecordsCap(t *testing.T) {
	dir := t.TempDir()
	cfg, keys, err := devConfig(dir)
	must(t, err)
	cfg.Listen, cfg.MetricsListen = "127.0.0.1:0", ""
	d := startDaemon(t, cfg, Options{BeforeOpen: keys.save})
	tenant, _ := d.tenant(config.DemoTenant)
	c := &engine.Call{}
	must(t, d.store.Engine.Consume(c, tenant, devResource, 3))
	capped := int64(250)
	must(t, d.store.Engine.SetQuota(c, tenant, devResource, &capped))
	must(t, d.store.Wait(context.Background(), c.Seq))
	must(t, d.Stop(context.Background()))

	again := startDaemon(t, cfg, Options{})
	var out bytes.Buffer
	printWelcome(&out, cfg, keys, again)
	if want := `The demo tenant may spend 250 units of "http"; 247 are left.`; !strings.Contains(out.String(), want) {
		t.Fatalf("the banner lacks %q:\n%s", want, out.String())
	}
}

// Development mode's demo tenant gives each new child (an agent-CLI run) a
// tool_calls budget, so the hook refuses without any further setup.
func TestDemoTenantGivesRunsABudget(t *testing.T) {
	cfg, _, err := devConfig(t.TempDir())
	must(t, err)
	cfg.Listen, cfg.MetricsListen = "127.0.0.1:0", ""
	d := startDaemon(t, cfg, Options{})
	tenant, _ := d.tenant(config.DemoTenant)
	c := &engine.Call{}
	run, _, err := d.store.Engine.Ensure(c, tenant, engine.Spec{Name: "claude:run"}, nil)
	must(t, err)
	for _, q := range []struct {
		resource string
		want     int64
	}{{"tool_calls", devRunToolCalls}, {"agents", devRunAgents}} {
		if got := run.Quotas[q.resource]; !got.Capped || got.Cap != q.want {
			t.Errorf("a new run's %s: %+v, want a cap of %d", q.resource, got, q.want)
		}
	}
	agent, _, err := d.store.Engine.Ensure(c, run.ID, engine.Spec{Name: "agent"}, nil)
	must(t, err)
	if got := agent.Quotas["tool_calls"]; !got.Capped || got.Cap != devAgentToolCalls {
		t.Errorf("a new subagent's tool_calls: %+v, want a cap of %d", got, devAgentToolCalls)
	}
}

// Reflection lists every service the port answers, Gubernator's included.
func TestReflectionListsTheGubernatorService(t *testing.T) {
	d := startDaemon(t, guberConfig(""), Options{})
	stream := grpcreflect.NewClient(h2cClient(), d.URL(), connect.WithGRPC()).NewStream(context.Background())
	defer stream.Close()
	names, err := stream.ListServices()
	must(t, err)
	for _, want := range []protoreflect.FullName{governorv1connect.GovernorServiceName, gubernatorv1connect.V1Name} {
		if !slices.Contains(names, want) {
			t.Fatalf("reflection lists %v, missing %s", names, want)
		}
	}
	files, err := stream.FileContainingSymbol(gubernatorv1connect.V1Name)
	if err != nil || len(files) == 0 || files[0].GetPackage() != "pb.gubernator" {
		t.Fatalf("reflection of %s: %v, %d files", gubernatorv1connect.V1Name, err, len(files))
	}
}

// -check validates the file and the TLS pair and starts nothing.
func TestCheckValidatesWithoutStarting(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	must(t, os.WriteFile(good, []byte("listen: 127.0.0.1:0\ndatabase_url: sqlite:"+filepath.Join(dir, "governor.db")+"\n"), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	must(t, os.WriteFile(bad, []byte("listen: 127.0.0.1:0\nreap_interval: 0s\n"), 0o600))
	noCert := filepath.Join(dir, "nocert.yaml")
	must(t, os.WriteFile(noCert, []byte("listen: 127.0.0.1:0\ntls: {cert_file: "+filepath.Join(dir, "absent.crt")+", key_file: "+filepath.Join(dir, "absent.key")+"}\n"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"valid", []string{"-config", good, "-check"}, ExitOK, "is a valid configuration"},
		{"mistakes", []string{"-config", bad, "-check"}, ExitUsage, "reap_interval"},
		{"a missing certificate", []string{"-config", noCert, "-check"}, ExitUsage, "absent.crt"},
		{"without a file", []string{"-check"}, ExitUsage, "-check needs -config FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			if code := Main(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit code %d, want %d\n%s%s", code, tc.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String()+stderr.String(), tc.want) {
				t.Fatalf("output lacks %q:\n%s%s", tc.want, stdout.String(), stderr.String())
			}
		})
	}
	if names := dirEntries(t, dir); len(names) != 3 {
		t.Fatalf("-check left %q in the directory, want only the three files", names)
	}
}
