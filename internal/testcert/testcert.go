// Package testcert makes self-signed TLS certificates for tests: a
// certificate for 127.0.0.1 and localhost that is its own authority, so the
// file a server serves is also the file a client trusts.
package testcert

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
)

// Cert is a certificate and its key, parsed and in PEM.
type Cert struct {
	X509    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
}

// New returns a fresh certificate with the given serial number, valid from
// an hour ago to an hour from now.
func New(t testing.TB, serial int64) Cert {
	t.Helper()
	return NewValid(t, serial, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
}

// NewValid returns a fresh certificate with the given serial number, valid
// from notBefore to notAfter.
func NewValid(t testing.TB, serial int64, notBefore, notAfter time.Time) Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: "governord test"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Cert{
		X509:    parsed,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
}

// Pool returns a pool that trusts only c.
func (c Cert) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.X509)
	return p
}

// Write puts c in dir as server.crt and server.key and returns the two
// paths. Each file is renamed into place, as a certificate renewal does.
func (c Cert) Write(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	Replace(t, certFile, c.CertPEM)
	Replace(t, keyFile, c.KeyPEM)
	return certFile, keyFile
}

// Replace writes data next to path and renames it into place.
func Replace(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
