package web

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleIsCurrent builds the dashboard from its sources and compares
// the result with the committed dist/, as generated code is checked. It
// needs cmd/internal/web/node_modules (npm ci in cmd/internal/web/); without them it is skipped,
// except under CI, which installs them.
func TestBundleIsCurrent(t *testing.T) {
	needModules(t)
	out := t.TempDir()
	cmd := exec.Command("node", "build.mjs", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the dashboard: %v\n%s", err, b)
	}
	entries, err := os.ReadDir("dist")
	if err != nil {
		t.Fatal(err)
	}
	built, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(entries) {
		t.Fatalf("the build makes %d files and dist/ holds %d; run `npm run build` in cmd/internal/web/ and commit dist/", len(built), len(entries))
	}
	for _, e := range built {
		want, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(filepath.Join("dist", e.Name()))
		if err != nil || !bytes.Equal(want, have) {
			t.Errorf("dist/%s is not what the sources build to; run `npm run build` in cmd/internal/web/ and commit dist/", e.Name())
		}
	}
}

// TestGeneratedTypeScriptIsCurrent generates the TypeScript of the proto
// with the dashboard's own template and compares it with cmd/internal/web/src/gen.
// Like the Go code's check it builds buf, so it runs only when
// GOVERNOR_CHECK_GENERATED=1, as .ci/run sets it.
func TestGeneratedTypeScriptIsCurrent(t *testing.T) {
	if os.Getenv("GOVERNOR_CHECK_GENERATED") != "1" {
		t.Skip("builds and runs buf; set GOVERNOR_CHECK_GENERATED=1 to run it")
	}
	needModules(t)
	out := t.TempDir()
	buf, err := exec.Command("go", "-C", "../../../tools", "tool", "-n", "buf").Output()
	if err != nil {
		t.Fatalf("build buf in tools/: %v", err)
	}
	cmd := exec.Command(strings.TrimSpace(string(buf)), "generate", "--template", "buf.gen.web.yaml", "--path", "proto/governor/v1", "-o", out)
	cmd.Dir = "../../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate: %v\n%s", err, b)
	}
	const file = "src/gen/governor/v1/governor_pb.ts"
	want, err := os.ReadFile(filepath.Join(out, "cmd", "internal", "web", file))
	if err != nil {
		t.Fatal(err)
	}
	if have, err := os.ReadFile(file); err != nil || !bytes.Equal(want, have) {
		t.Errorf("cmd/internal/web/%s is not what the proto generates; run `npm run gen && npm run build` in cmd/internal/web/ and commit both", file)
	}
}

// needModules skips a test that needs cmd/internal/web/node_modules when they are
// absent, and fails it under CI, which installs them.
func needModules(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("node_modules", ".bin", "esbuild")); err != nil {
		msg := "cmd/internal/web/node_modules is absent: run `npm ci` in cmd/internal/web/ to check that the committed dashboard build is current"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// TestHandlerServesTheDashboard checks the page, the bundle and the
// headers that confine it, and the redirect of /ui.
func TestHandlerServesTheDashboard(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for path, want := range map[string]string{"/ui/": "<title>Governor</title>", "/ui/app.js": "openSession", "/ui/app.css": ".bar"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, body without %q", path, res.StatusCode, want)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: policy %q", path, csp)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(srv.URL + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d to %q, want a redirect to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
}
