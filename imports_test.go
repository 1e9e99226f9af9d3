package governor

import (
	"os/exec"
	"strings"
	"testing"
)

// What the SDK may not pull into a worker: governord itself, its storage
// and drivers, a terminal UI, a SQL builder, OpenTelemetry's SDK and
// exporters (a worker configures its own), or the testing package.
var forbiddenImports = []string{
	"governor.dev/governor/internal/server",
	"governor.dev/governor/internal/engine",
	"governor.dev/governor/internal/eventlog",
	"governor.dev/governor/internal/durable",
	"governor.dev/governor/internal/daemon",
	"governor.dev/governor/internal/config",
	"governor.dev/governor/internal/metrics",
	"governor.dev/governor/internal/adaptive",
	"governor.dev/governor/internal/tui",
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
