package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/pgtest"
)

var demoKeyLine = regexp.MustCompile(`(?m)^\s+demo tenant key\s+(\S+)$`)

func TestDevModeServesAConsumeWithThePrintedKey(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	args := []string{"-listen", "127.0.0.1:0", "-metrics-listen", "localhost:0"} // no fixed ports in tests
	spent := int64(0)
	for start, kept := range []string{"generated now", "reused from an earlier start"} {
		p := startProc(t, dir, nil, args...)
		base := p.Serving()
		out := p.StdoutUntil("governord -config FILE") // the welcome's last line
		m := demoKeyLine.FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, kept) {
			t.Fatalf("start %d: no demo key, or the keys were not %s:\n%s", start, kept, p.Output())
		}
		var answer struct {
			Remaining string `json:"remaining"`
		}
		api := newJSONAPI(base)
		must(t, api.call(ctx, m[1], "Consume", map[string]any{"node_id": 0, "resource": devResource, "amount": 1}, &answer))
		spent++
		if answer.Remaining != strconv.FormatInt(devBudget-spent, 10) {
			t.Fatalf("start %d: remaining %q after %d consumes of %d", start, answer.Remaining, spent, devBudget)
		}
		spent += runPrintedCurl(t, out)
		openPrintedDashboard(t, out)
		p.Signal(syscall.SIGTERM)
		if code := p.Wait(30 * time.Second); code != 0 {
			t.Fatalf("start %d: exit code %d after SIGTERM\n%s", start, code, p.Output())
		}
	}
	fi, err := os.Stat(filepath.Join(dir, KeysFile))
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("keys file mode %04o, want 0600", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, "governor.db")); err != nil {
		t.Fatalf("no record in the working directory: %v", err)
	}
}

// openPrintedDashboard fetches the dashboard at the address development
// mode printed.
func openPrintedDashboard(t *testing.T, out string) {
	t.Helper()
	m := dashboardLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("development mode printed no dashboard address:\n%s", out)
	}
	res, err := http.Get(m[1])
	must(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	must(t, err)
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "<title>Governor</title>") {
		t.Fatalf("GET %s: %d\n%s", m[1], res.StatusCode, body)
	}
}

var dashboardLine = regexp.MustCompile(`(?m)^\s+dashboard\s+(http://\S+/ui/)`)

// runPrintedCurl runs the curl command development mode printed, as a user
// would paste it, and returns how many units it spent (0 without curl).
func runPrintedCurl(t *testing.T, out string) int64 {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("no curl on this machine: the printed command is not run")
		return 0
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "curl ") {
			line = strings.TrimSpace(l)
		}
	}
	got, err := exec.Command("sh", "-c", line+" --silent --fail").CombinedOutput()
	if err != nil || !strings.Contains(string(got), `"remaining"`) {
		t.Fatalf("the printed command %s: %v\n%s", line, err, got)
	}
	return 1
}

func TestStoppedDaemonLosesNothingAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{
		{"SIGTERM stops gracefully", syscall.SIGTERM, 0},
		{"SIGKILL", syscall.SIGKILL, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeConfig(t, dir, "sqlite:"+filepath.Join(dir, "governor.db"))
			p := startProc(t, dir, nil, "-config", cfg)
			l := startLoad(t, p.Serving(), 8)
			<-l.first
			time.Sleep(300 * time.Millisecond)
			p.Signal(tc.sig)
			signalled := time.Now()
			code := p.Wait(30 * time.Second)
			t.Logf("governord exited %s after %s", time.Since(signalled).Round(time.Millisecond), tc.sig)
			acked, sent := l.stop()
			if code != tc.code {
				t.Fatalf("exit code %d, want %d\n%s", code, tc.code, p.Output())
			}
			again := startProc(t, dir, nil, "-config", cfg)
			verifyOnRecord(t, again.Serving(), acked, sent)
			again.Signal(syscall.SIGTERM)
			again.Wait(30 * time.Second)
		})
	}
}

func TestFailedCommitStopsTheDaemon(t *testing.T) {
	pg := pgtest.StartDedicated(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, pg.DSN())
	p := startProc(t, dir, nil, "-config", cfg)
	base := p.Serving()
	l := startLoad(t, base, 8)
	<-l.first
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	must(t, pg.Kill())
	code := p.Wait(90 * time.Second)
	t.Logf("governord exited %s after the database was killed", time.Since(killed).Round(time.Millisecond))
	acked, sent := l.stop()
	if code != ExitFailure || !strings.Contains(p.Output(), "commit to the record failed") {
		t.Fatalf("after the database stopped, governord exited with %d, want %d with the reason\n%s", code, ExitFailure, p.Output())
	}
	u, err := url.Parse(base)
	must(t, err)
	if conn, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections after governord stopped", u.Host)
	}
	must(t, pg.Start())
	again := startProc(t, dir, nil, "-config", cfg)
	verifyOnRecord(t, again.Serving(), acked, sent)
	again.Signal(syscall.SIGTERM)
	if code := again.Wait(30 * time.Second); code != 0 {
		t.Fatalf("the restarted governord exited with %d after SIGTERM\n%s", code, again.Output())
	}
}

func TestConfigWithMistakesExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "governor.yaml")
	must(t, os.WriteFile(path, []byte("listen: 127.0.0.1:0\ntenants:\n  - name: team-a\n    api_key: team-a-key-0123456789\n    weight: 0\n"), 0o600))
	p := startProc(t, dir, nil, "-config", path)
	if code := p.Wait(30 * time.Second); code != ExitUsage {
		t.Fatalf("exit code %d, want %d\n%s", code, ExitUsage, p.Output())
	}
	if want := path + ":5: tenants[0].weight: must be between 1 and 1000, got 0"; !strings.Contains(p.Output(), want) {
		t.Fatalf("output lacks %q\n%s", want, p.Output())
	}
}
