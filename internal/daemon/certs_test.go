package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCert is a self-signed certificate for 127.0.0.1 and its key, PEM.
type testCert struct {
	serial   int64
	certPEM  []byte
	keyPEM   []byte
	x509Cert *x509.Certificate
}

func newTestCert(t *testing.T, serial int64) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "governord test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	parsed, err := x509.ParseCertificate(der)
	must(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	return testCert{
		serial:   serial,
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		x509Cert: parsed,
	}
}

// pool trusts only c.
func (c testCert) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.x509Cert)
	return p
}

// replaceFile writes data next to path and renames it into place, as a
// certificate renewal does.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	must(t, os.WriteFile(tmp, data, 0o600))
	must(t, os.Rename(tmp, path))
}

// writePair puts c in dir and returns the two paths.
func writePair(t *testing.T, dir string, c testCert) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	replaceFile(t, certFile, c.certPEM)
	replaceFile(t, keyFile, c.keyPEM)
	return certFile, keyFile
}

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
	a, b, c := newTestCert(t, 1), newTestCert(t, 2), newTestCert(t, 3)
	certFile, keyFile := writePair(t, dir, a)
	cert, err := loadCertificate(certFile, keyFile, quietLog())
	must(t, err)
	steps := []struct {
		name   string
		change func()
		want   int64
	}{
		{"unchanged", func() {}, 1},
		{"renewed pair", func() { writePair(t, dir, b) }, 2},
		{"certificate renewed, key not yet: the previous pair stays", func() { replaceFile(t, certFile, c.certPEM) }, 2},
		{"then the key", func() { replaceFile(t, keyFile, c.keyPEM) }, 3},
		{"a file that is not PEM: the previous pair stays", func() { replaceFile(t, certFile, []byte("garbage")) }, 3},
		{"a file removed: the previous pair stays", func() { must(t, os.Remove(certFile)) }, 3},
		{"both back", func() { writePair(t, dir, a) }, 1},
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
	a, b := newTestCert(t, 1), newTestCert(t, 2)
	certFile, keyFile := writePair(t, dir, a)
	replaceFile(t, keyFile, b.keyPEM)
	for _, tc := range []struct{ name, cert, key string }{
		{"mismatched key", certFile, keyFile},
		{"missing file", filepath.Join(dir, "absent.crt"), keyFile},
	} {
		if _, err := loadCertificate(tc.cert, tc.key, quietLog()); err == nil {
			t.Errorf("%s: loaded", tc.name)
		}
	}
}
