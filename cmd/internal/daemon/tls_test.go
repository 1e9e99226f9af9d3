package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/internal/testcert"
)

// startTLS starts a daemon serving cert on loopback, in memory.
func startTLS(t *testing.T, cert testcert.Cert) (*Daemon, string, string) {
	t.Helper()
	certFile, keyFile := cert.Write(t, t.TempDir())
	cfg := testConfig("")
	cfg.TLS = config.TLS{CertFile: certFile, KeyFile: keyFile}
	d := startDaemon(t, cfg, Options{})
	if !strings.HasPrefix(d.URL(), "https://") {
		t.Fatalf("URL %s with TLS configured", d.URL())
	}
	return d, certFile, keyFile
}

// tlsClient trusts pool and speaks HTTP/2 or HTTP/1.1 over TLS.
func tlsClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true,
	}}
}

func TestTLSRefusesAPlaintextClientBeforeItSendsItsKey(t *testing.T) {
	cert := testcert.New(t, 1)
	d, _, _ := startTLS(t, cert)
	addr := d.Addr().String()
	tenant := d.tenants["team-a"]
	used := func() int64 { return describe(t, d.store, tenant).Quotas["http"].Used }

	// A client's first bytes: the HTTP/2 preface, or an HTTP/1 request
	// line's first word. The server closes the connection on them, so the
	// headers that would carry the key are never read.
	for _, first := range []string{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "POST "} {
		conn, err := net.Dial("tcp", addr)
		must(t, err)
		_, err = conn.Write([]byte(first))
		must(t, err)
		must(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		answer, err := io.ReadAll(conn) // until the server closes
		conn.Close()
		var timeout net.Error
		if errors.As(err, &timeout) && timeout.Timeout() {
			t.Fatalf("after %q the server kept the connection open, waiting for more", first)
		}
		if len(answer) > 0 && !strings.HasPrefix(string(answer), "HTTP/1.0 400 Bad Request") {
			t.Fatalf("after %q the server answered %q", first, answer)
		}
	}

	// Whole plain-text requests, with the key: HTTP/1.1 and HTTP/2
	// without TLS. Neither is served, and nothing is charged.
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	plain := map[string]*http.Client{
		"HTTP/1.1": {Timeout: 10 * time.Second},
		"h2c":      {Timeout: 10 * time.Second, Transport: &http.Transport{Protocols: &h2c}},
	}
	ctx := context.Background()
	for name, client := range plain {
		api := jsonAPI{base: "http://" + addr, client: client}
		if err := api.consume(ctx, testTeamKey, 0, "http", 1); err == nil {
			t.Fatalf("%s in plain text to the TLS port: served", name)
		}
	}
	if used() != 0 {
		t.Fatalf("plain-text consumes charged %d", used())
	}
	// The same key over TLS works.
	api := jsonAPI{base: d.URL(), client: tlsClient(cert.Pool())}
	must(t, api.consume(ctx, testTeamKey, 0, "http", 1))
	if used() != 1 {
		t.Fatalf("a consume over TLS charged %d, want 1", used())
	}
}

func TestTLSIsVersion13Only(t *testing.T) {
	cert := testcert.New(t, 1)
	d, _, _ := startTLS(t, cert)
	for _, tc := range []struct {
		version uint16
		ok      bool
	}{{tls.VersionTLS12, false}, {tls.VersionTLS13, true}} {
		conn, err := tls.Dial("tcp", d.Addr().String(), &tls.Config{RootCAs: cert.Pool(), MaxVersion: tc.version})
		if (err == nil) != tc.ok {
			t.Fatalf("handshake with at most %s: %v", tls.VersionName(tc.version), err)
		}
		if err == nil {
			conn.Close()
		}
	}
}

func TestTLSCertificateIsReloadedWithoutRestart(t *testing.T) {
	a, b := testcert.New(t, 1), testcert.New(t, 2)
	d, certFile, keyFile := startTLS(t, a)
	pool := a.Pool()
	pool.AddCert(b.X509)
	served := func() int64 {
		conn, err := tls.Dial("tcp", d.Addr().String(), &tls.Config{RootCAs: pool})
		must(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := served(); got != 1 {
		t.Fatalf("served certificate %d, want 1", got)
	}
	testcert.Replace(t, certFile, b.CertPEM)
	testcert.Replace(t, keyFile, b.KeyPEM)
	if got := served(); got != 2 {
		t.Fatalf("after the files were replaced, served certificate %d, want 2", got)
	}
	ctx := context.Background()
	api := jsonAPI{base: d.URL(), client: tlsClient(b.Pool())}
	must(t, api.consume(ctx, testTeamKey, 0, "http", 1))
}
