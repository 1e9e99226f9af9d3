package governor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What the SDK may not pull into a worker: governord itself, its storage
// and drivers, a terminal UI, a SQL builder, OpenTelemetry's SDK and
// exporters (a worker configures its own), or the testing package.
var forbiddenImports = []string{
	"governor.dev/governor/cmd/internal/server",
	"governor.dev/governor/cmd/internal/engine",
	"governor.dev/governor/cmd/internal/eventlog",
	"governor.dev/governor/cmd/internal/durable",
	"governor.dev/governor/cmd/internal/daemon",
	"governor.dev/governor/cmd/internal/config",
	"governor.dev/governor/cmd/internal/metrics",
	"governor.dev/governor/cmd/internal/adaptive",
	"governor.dev/governor/cmd/internal/tui",
	"modernc.org/sqlite",
	"github.com/jackc/pgx",
	"github.com/mattn/go-sqlite3",
	"github.com/lib/pq",
	"github.com/charmbracelet",
	"github.com/doug-martin/goqu",
	"github.com/Masterminds/squirrel",
	"go.opentelemetry.io/otel/sdk",
	"go.opentelemetry.io/otel/exporters",
	"connectrpc.com/otelconnect",
	"google.golang.org/grpc",
	"testing",
}

// The modules the SDK may use beyond the standard library: OpenTelemetry's
// API (for the trace context of calls) with what it needs, and no more of
// OpenTelemetry.
var allowedModules = []string{
	"governor.dev/governor/internal/gen/",
	"governor.dev/governor/internal/clientconn",
	"connectrpc.com/connect",
	"google.golang.org/protobuf/",
	"go.opentelemetry.io/otel/",
	"go.opentelemetry.io/auto/sdk/",
	"github.com/go-logr/",
	"github.com/cespare/xxhash/v2",
}

func TestSDKStaysLight(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "governor.dev/governor").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), deps)
	}
	for _, dep := range deps {
		for _, bad := range forbiddenImports {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("the SDK imports %s", dep)
			}
		}
		if dep == "governor.dev/governor" || isStd(dep) {
			continue
		}
		if !allowed(dep) {
			t.Errorf("the SDK imports %s, outside the allowed modules %q", dep, allowedModules)
		}
	}
}

// isStd says whether a package is the standard library's: no dot in its
// first element.
func isStd(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

func allowed(pkg string) bool {
	for _, a := range allowedModules {
		if strings.HasPrefix(pkg, a) || pkg == strings.TrimSuffix(a, "/") {
			return true
		}
	}
	return false
}

// The modules no program that imports only the SDK may have in its module
// graph: governord's own, its storage, drivers, terminal UI, command line,
// metrics, browser tests, configuration and code generation.
var forbiddenModules = []string{
	"governor.dev/governor/cmd",
	"github.com/charmbracelet/",
	"github.com/jackc/",
	"github.com/pressly/goose",
	"modernc.org/",
	"github.com/mattn/go-sqlite3",
	"github.com/lib/pq",
	"github.com/spf13/",
	"github.com/chromedp/",
	"github.com/prometheus/",
	"github.com/bufbuild/",
	"buf.build/",
	"go.yaml.in/",
	"gopkg.in/yaml",
}

// A module that imports only the SDK sees none of the daemon's modules in
// its module graph: the SDK's go.mod requires only what the SDK and its own
// tests use. The scratch module resolves governor.dev/governor to this
// directory and reads every other module from the local module cache.
func TestSDKUsersModuleGraphStaysLight(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	user := t.TempDir()
	sums, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":  "module example.test/worker\n\ngo 1.26\n\nrequire governor.dev/governor v0.0.0\n\nreplace governor.dev/governor => " + root + "\n",
		"go.sum":  string(sums),
		"main.go": "package main\n\nimport \"governor.dev/governor\"\n\nvar _ = governor.Dial\n\nfunc main() {}\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(user, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "mod", "graph")
	cmd.Dir = user
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOSUMDB=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go mod graph: %v\n%s", err, out)
	}
	edges := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(edges) < 2 {
		t.Fatalf("go mod graph listed %d edges:\n%s", len(edges), out)
	}
	for _, edge := range edges {
		for _, mod := range strings.Fields(edge) {
			for _, bad := range forbiddenModules {
				if strings.HasPrefix(mod, bad) {
					t.Errorf("a module that imports only the SDK has %s in its module graph (edge %q)", mod, edge)
				}
			}
		}
	}
}
