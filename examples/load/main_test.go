package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"governor.dev/governor/internal/testbin"
)

const teamKey = "team-a-key-0123456789"

// governord runs cmd/governord as a process of its own, killed when t
// ends, and points the environment at it.
func governord(t *testing.T) {
	t.Helper()
	bin, err := testbin.Path("governor.dev/governor/cmd/governord")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "governor.yaml")
	yaml := fmt.Sprintf(`listen: 127.0.0.1:0
metrics_listen: "off"
database_url: %q
admin_key: admin-key-0123456789
tenants:
  - {name: team-a, api_key: %s, weight: 1}
log: {format: json}
`, "sqlite:"+filepath.Join(dir, "governor.db"), teamKey)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testbin.Start(t, bin, dir, nil, "-config", cfg)
	_, addr, _ := strings.Cut(p.Serving(), "://")
	t.Setenv("GOVERNOR_ADDR", addr)
	t.Setenv("GOVERNOR_API_KEY", teamKey)
}

func number(t *testing.T, out, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output lacks %q:\n%s", pattern, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestLoadSpendsTheBudgetWithinTheLimits(t *testing.T) {
	governord(t)
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-workers", "3", "-budget", "40", "-jobs", "8"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	got := out.String()
	t.Log("\n" + got)
	if n := number(t, got, `http: (\d+) requests of a budget of 40`); n != 40 {
		t.Fatalf("%d requests reached the service, want the whole budget of 40", n)
	}
	if n := number(t, got, `service: at most (\d+) requests at once`); n > 3 {
		t.Fatalf("%d requests at once with 3 workers", n)
	}
	if n := number(t, got, `at most (\d+) at once\n$`); n > 2 {
		t.Fatalf("%d writes at once under a db limit of 2", n)
	}
	if n := number(t, got, `db: (\d+) writes`); n == 0 || n > 40 {
		t.Fatalf("%d writes for 40 requests", n)
	}
}

func TestLoadRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-workers", "0"}, {"-budget", "-1"}, {"-jobs", "x"}} {
		var out, errs bytes.Buffer
		if code := run(context.Background(), args, &out, &errs); code != 2 {
			t.Fatalf("%q: exit %d, want 2", args, code)
		}
		if !strings.Contains(errs.String(), strings.TrimPrefix(args[0], "-")) {
			t.Fatalf("%q: the message does not name the flag: %s", args, errs.String())
		}
	}
}

func TestLoadWithoutGovernordFails(t *testing.T) {
	t.Setenv("GOVERNOR_ADDR", "127.0.0.1:1")
	t.Setenv("GOVERNOR_API_KEY", teamKey)
	var out, errs bytes.Buffer
	if code := run(context.Background(), nil, &out, &errs); code != 1 || !strings.Contains(errs.String(), "governor") {
		t.Fatalf("exit %d (%s), want 1 saying governord is unreachable", code, errs.String())
	}
}

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
