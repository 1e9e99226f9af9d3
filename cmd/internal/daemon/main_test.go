package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMainRefusesFlagsAndConfigurationsWithMistakes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	must(t, os.WriteFile(bad, []byte("listen: 127.0.0.1:0\nreap_interval: 0s\nbogus: 1\n"), 0o600))
	good := filepath.Join(dir, "good.yaml")
	must(t, os.WriteFile(good, []byte("listen: 127.0.0.1:0\nmetrics_listen: \"off\"\n"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing file", []string{"-config", filepath.Join(dir, "absent.yaml")}, []string{"absent.yaml: no such file"}},
		{"a directory", []string{"-config", dir}, []string{"a directory, not a configuration file"}},
		{"empty -config", []string{"-config", ""}, []string{"-config needs a file name"}},
		{"an argument", []string{"serve"}, []string{`unexpected argument "serve"`}},
		{"unknown flag", []string{"-port", "1"}, []string{"flag provided but not defined: -port"}},
		{"mistakes in the file", []string{"-config", bad}, []string{
			"nothing was started",
			bad + ":2: reap_interval: must be a positive duration",
			bad + ":3:",
		}},
		{"plain text beyond loopback from a flag", []string{"-config", good, "-listen", "0.0.0.0:7600"}, []string{
			`listen: "0.0.0.0:7600" is not a loopback address`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := Main(context.Background(), tc.args, &stdout, &stderr)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if stdout.String() != "" {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

func TestMainStopsCleanlyOnASignalDuringStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "governor.yaml")
	must(t, os.WriteFile(path, []byte("listen: 127.0.0.1:0\nmetrics_listen: \"off\"\nlog: {level: error}\n"), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr syncBuffer
	if code := Main(ctx, []string{"-config", path}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit code %d, want %d\n%s", code, ExitOK, stderr.String())
	}
}
