package daemon

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"governor.dev/governor/internal/testcert"
)

// -health answers 0 for a serving governord, plain or TLS, and 1 for one
// that stopped or an address where none answers.
func TestHealthProbe(t *testing.T) {
	ctx := context.Background()
	plain := startDaemon(t, testConfig(""), Options{})
	tlsd, certFile, keyFile := startTLS(t, testcert.New(t, 1))
	for name, tc := range map[string]struct{ listen, tls string }{
		"plain":                          {plain.Addr().String(), ""},
		"TLS, trusting its certificate":  {tlsd.Addr().String(), "tls: {cert_file: " + certFile + ", key_file: " + keyFile + "}\n"},
		"a wildcard host, over loopback": {"0.0.0.0:" + portOf(t, plain.Addr()), "allow_plaintext: true\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if code, out := runHealth(t, ctx, tc.listen, tc.tls); code != ExitOK {
				t.Fatalf("exit code %d, want %d\n%s", code, ExitOK, out)
			}
		})
	}

	stopping := startDaemon(t, testConfig(""), Options{})
	stopping.closeAPIs() // what a graceful stop does first
	if code, out := runHealth(t, ctx, stopping.Addr().String(), ""); code != ExitFailure || !strings.Contains(out, "is not serving") {
		t.Fatalf("a stopping governord: exit code %d, want %d saying it is not serving\n%s", code, ExitFailure, out)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0") // bound, never answering
	must(t, err)
	defer ln.Close()
	must(t, plain.Stop(ctx))
	for name, listen := range map[string]string{"stopped": plain.Addr().String(), "silent": ln.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			if code, out := runHealth(t, ctx, listen, ""); code != ExitFailure || !strings.Contains(out, "does not answer the health check") {
				t.Fatalf("exit code %d, want %d saying why\n%s", code, ExitFailure, out)
			}
		})
	}
}

func portOf(t *testing.T, a net.Addr) string {
	t.Helper()
	_, port, err := net.SplitHostPort(a.String())
	must(t, err)
	return port
}

// runHealth runs governord -health with a configuration listening on listen.
func runHealth(t *testing.T, ctx context.Context, listen, extra string) (int, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "governor.yaml")
	must(t, os.WriteFile(path, []byte("listen: \""+listen+"\"\nmetrics_listen: \"off\"\n"+extra), 0o600))
	var stdout, stderr syncBuffer
	code := Main(ctx, []string{"-config", path, "-health"}, &stdout, &stderr)
	return code, stdout.String() + stderr.String()
}
