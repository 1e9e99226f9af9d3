package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/internal/testcert"
)

func servedSerial(t *testing.T, c *certificate) int64 {
	t.Helper()
	got, err := c.get(&tls.ClientHelloInfo{})
	must(t, err)
	leaf, err := x509.ParseCertificate(got.Certificate[0])
	must(t, err)
	return leaf.SerialNumber.Int64()
}

func TestCertificateIsReadAgainWhenItsFilesChange(t *testing.T) {
	dir := t.TempDir()
	a, b, c := testcert.New(t, 1), testcert.New(t, 2), testcert.New(t, 3)
	certFile, keyFile := a.Write(t, dir)
	cert, err := loadCertificate(certFile, keyFile, quietLog(), time.Now)
	must(t, err)
	steps := []struct {
		name   string
		change func()
		want   int64
	}{
		{"unchanged", func() {}, 1},
		{"renewed pair", func() { b.Write(t, dir) }, 2},
		{"certificate renewed, key not yet: the previous pair stays", func() { testcert.Replace(t, certFile, c.CertPEM) }, 2},
		{"then the key", func() { testcert.Replace(t, keyFile, c.KeyPEM) }, 3},
		{"a file that is not PEM: the previous pair stays", func() { testcert.Replace(t, certFile, []byte("garbage")) }, 3},
		{"a file removed: the previous pair stays", func() { must(t, os.Remove(certFile)) }, 3},
		{"both back", func() { a.Write(t, dir) }, 1},
	}
	for _, s := range steps {
		s.change()
		if got := servedSerial(t, cert); got != s.want {
			t.Fatalf("%s: served certificate %d, want %d", s.name, got, s.want)
		}
	}
}

func TestCertificateThatDoesNotLoadIsAnErrorAtStart(t *testing.T) {
	dir := t.TempDir()
	a, b := testcert.New(t, 1), testcert.New(t, 2)
	certFile, keyFile := a.Write(t, dir)
	testcert.Replace(t, keyFile, b.KeyPEM)
	for _, tc := range []struct{ name, cert, key string }{
		{"mismatched key", certFile, keyFile},
		{"missing file", filepath.Join(dir, "absent.crt"), keyFile},
	} {
		if _, err := loadCertificate(tc.cert, tc.key, quietLog(), time.Now); err == nil {
			t.Errorf("%s: loaded", tc.name)
		}
	}
}

// Every mistake in the TLS pair stops governord at start with exit 2, before
// anything is created.
func TestTLSMistakesExitTwoAndCreateNothing(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	a, b := testcert.New(t, 1), testcert.New(t, 2)
	expired := testcert.NewValid(t, 3, now.Add(-48*time.Hour), now.Add(-time.Hour))
	future := testcert.NewValid(t, 4, now.Add(time.Hour), now.Add(48*time.Hour))
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		must(t, os.WriteFile(path, data, 0o600))
		return path
	}
	for _, tc := range []struct{ name, cert, key, want string }{
		{"key of another certificate", write("a.crt", a.CertPEM), write("b.key", b.KeyPEM), "private key does not match"},
		{"garbage", write("garbage.crt", []byte("not a certificate")), write("a.key", a.KeyPEM), "failed to find any PEM data"},
		{"a missing file", filepath.Join(dir, "absent.crt"), filepath.Join(dir, "a.key"), "absent.crt"},
		{"expired", write("expired.crt", expired.CertPEM), write("expired.key", expired.KeyPEM), "expired at"},
		{"not yet valid", write("future.crt", future.CertPEM), write("future.key", future.KeyPEM), "is not valid before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := t.TempDir()
			path := filepath.Join(run, "governor.yaml")
			must(t, os.WriteFile(path, []byte("listen: 127.0.0.1:0\nmetrics_listen: \"off\"\ndatabase_url: sqlite:"+
				filepath.Join(run, "governor.db")+"\ntls: {cert_file: "+tc.cert+", key_file: "+tc.key+"}\n"), 0o600))
			var stdout, stderr syncBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if code := Main(ctx, []string{"-config", path}, &stdout, &stderr); code != ExitUsage {
				t.Fatalf("exit code %d, want %d\n%s", code, ExitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) || !strings.Contains(stderr.String(), "nothing was started") {
				t.Fatalf("stderr lacks %q or that nothing was started:\n%s", tc.want, stderr.String())
			}
			if names := dirEntries(t, run); len(names) != 1 {
				t.Fatalf("the failed start left %q", names)
			}
		})
	}
}

// A certificate near its end is logged at start and, when the time comes,
// at a handshake; its expiry once more; each once.
func TestCertificateExpiryIsWarnedBeforeAndWhenItComes(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	end := start.Add(expiryWarning + 24*time.Hour)
	cert := testcert.NewValid(t, 1, start.Add(-time.Hour), end)
	certFile, keyFile := cert.Write(t, dir)
	var log syncBuffer
	now := start
	c, err := loadCertificate(certFile, keyFile, slog.New(slog.NewTextHandler(&log, nil)), func() time.Time { return now })
	must(t, err)
	steps := []struct {
		name string
		at   time.Time
		want []string
	}{
		{"at start, far from the end", start, nil},
		{"a day before the warning", end.Add(-expiryWarning - time.Hour), nil},
		{"inside the warning", end.Add(-expiryWarning + time.Hour), []string{"expires soon"}},
		{"later, still inside", end.Add(-time.Hour), []string{"expires soon"}},
		{"past the end", end.Add(time.Hour), []string{"expires soon", "has expired"}},
		{"later still", end.Add(2 * time.Hour), []string{"expires soon", "has expired"}},
	}
	for _, s := range steps {
		now = s.at
		if _, err := c.get(&tls.ClientHelloInfo{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"expires soon", "has expired"} {
			if got, want := strings.Count(log.String(), w), count(s.want, w); got != want {
				t.Fatalf("%s: the log says %q %d times, want %d:\n%s", s.name, w, got, want, log.String())
			}
		}
	}

	var again syncBuffer
	if _, err := loadCertificate(certFile, keyFile, slog.New(slog.NewTextHandler(&again, nil)),
		func() time.Time { return end.Add(-time.Hour) }); err != nil || !strings.Contains(again.String(), "expires soon") {
		t.Fatalf("a start inside the warning: %v, log:\n%s", err, again.String())
	}
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
