package cli_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"governor.dev/governor/internal/clientconn"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "governord test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestHookAndVerbsOverTLS(t *testing.T) {
	t.Parallel()
	cfg := testConfig("")
	certFile, keyFile := selfSigned(t, t.TempDir())
	cfg.TLS.CertFile, cfg.TLS.KeyFile = certFile, keyFile
	d := startGovernord(t, cfg)
	pre := payload(t, "claude/pre_tool_use.json", "tls", "t1", "")

	// Trusting the certificate through the environment or the flag works.
	r := governor(t, append(envFor(d, teamAKey), clientconn.EnvCAFile+"="+certFile), pre, hookArgs("claude", t.TempDir())...)
	mustContain(t, r, 0)
	mustContain(t, governor(t, envFor(d, teamAKey), nil, "describe", "--ca-file", certFile), 0, "claude:tls #", "tool_calls 1/3")

	// Plain text to a TLS server, or TLS without trusting its certificate,
	// refuses the tool.
	r = governor(t, envFor(d, teamAKey), pre, hookArgs("claude", t.TempDir())...)
	mustContain(t, r, 2, "Governor blocked this tool", "could not be reached")
	r = governor(t, envFor(d, teamAKey), pre, hookArgs("claude", t.TempDir(), "--tls")...)
	mustContain(t, r, 2, "Governor blocked this tool", "certificate")
}
