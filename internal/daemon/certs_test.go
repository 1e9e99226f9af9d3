package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

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
	cert, err := loadCertificate(certFile, keyFile, quietLog())
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
		if _, err := loadCertificate(tc.cert, tc.key, quietLog()); err == nil {
			t.Errorf("%s: loaded", tc.name)
		}
	}
}
