package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/internal/clientconn"
)

// tmuxScreen runs the real binary in a tmux pane and reads the pane.
type tmuxScreen struct {
	t    *testing.T
	name string
}

func startTmux(t *testing.T, env []string, args ...string) *tmuxScreen {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	s := &tmuxScreen{t: t, name: fmt.Sprintf("governor-ui-%d", time.Now().UnixNano())}
	cmdline := "env -i HOME=" + t.TempDir() + " TERM=xterm-256color " + strings.Join(env, " ") + " " + governorBinary(t) + " " + strings.Join(args, " ") + "; sleep 30"
	out, err := exec.Command("tmux", "-L", s.name, "new-session", "-d", "-s", s.name, "-x", "160", "-y", "30", cmdline).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.name, "kill-server").Run() })
	return s
}

func (s *tmuxScreen) keys(keys ...string) {
	s.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-L", s.name, "send-keys", "-t", s.name}, keys...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys: %v\n%s", err, out)
	}
}

// see waits until the pane shows every part.
func (s *tmuxScreen) see(parts ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, _ := exec.Command("tmux", "-L", s.name, "capture-pane", "-p", "-t", s.name).Output()
		screen := string(out)
		missing := ""
		for _, p := range parts {
			if !strings.Contains(screen, p) {
				missing = p
				break
			}
		}
		if missing == "" {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q:\n%s", missing, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestUIWithGovernordsConfigStartsAtTheRootAndEdits(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	dir := t.TempDir()
	file := filepath.Join(dir, "governor.yaml")
	yaml := fmt.Sprintf("listen: %s\nadmin_key: ${ADMIN}\ntenants:\n  - name: team-a\n    api_key: %s\n", d.Addr(), teamAKey)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, []string{"ADMIN=" + adminKey}, "ui", "-config", file)
	s.see("governor · (root)", "team-a", "team-b")
	// The admin may change a tenant's own caps.
	s.keys("e")
	s.see("Caps of team-a", "new quota (name=value)")
	s.keys("-l", "tool_calls=42")
	s.keys("Enter")
	s.see("tool_calls 0/42", "caps of team-a saved")
	if got := a.child(0, "team-a").GetResources()["tool_calls"].GetCap(); got != 42 {
		t.Fatalf("team-a's tool_calls cap on record = %d, want 42", got)
	}
	s.keys("q")
}

func TestUIConfigMistakes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, yaml string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		file string
		env  []string
		want string
	}{
		{filepath.Join(dir, "missing.yaml"), nil, "--config: read config"},
		{write("port0.yaml", "listen: 127.0.0.1:0\nadmin_key: admin-key-0123456789\n"), nil, "names no fixed port"},
		{write("nokey.yaml", "listen: 127.0.0.1:7600\n"), nil, "sets no admin_key"},
		{write("hashed.yaml", "listen: 127.0.0.1:7600\nadmin_key: sha256:"+strings.Repeat("ab", 32)+"\n"), nil, "holds only the admin key's SHA-256"},
		{write("bad.yaml", "listen: [\n"), nil, "--config:"},
		{write("tls.yaml", "listen: 127.0.0.1:1\nadmin_key: admin-key-0123456789\ntls:\n  cert_file: /nonexistent/c.pem\n  key_file: /nonexistent/k.pem\n"), nil, "read CA file"},
		{write("down.yaml", "listen: 127.0.0.1:1\nadmin_key: admin-key-0123456789\n"), nil, "could not be reached"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			mustContain(t, governor(t, append(c.env, clientconn.EnvAPIKey+"="), nil, "ui", "-config", c.file), 2, c.want)
		})
	}
}

// Without a terminal the screen says so and exits 2 without writing a
// single escape sequence.
func TestUIWithoutATerminalSaysSo(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	r := governor(t, envFor(d, teamAKey), nil, "ui")
	mustContain(t, r, 2, "must be a terminal", "governor describe")
	if r.stdout != "" {
		t.Fatalf("stdout %q, want nothing: no screen was drawn", r.stdout)
	}
}
