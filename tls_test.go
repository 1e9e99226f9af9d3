package governor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"governor.dev/governor/internal/config"
)

// selfSigned writes a certificate for 127.0.0.1 that is its own CA, and
// its key, into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "governord"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestDialOverTLS(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cert, key := selfSigned(t, dir)
	cfg.TLS = config.TLS{CertFile: cert, KeyFile: key}
	g := newGovernordWith(t, cfg)

	c := dial(t, g.addr, WithCAFile(cert))
	ctx, _ := task(t, c, Spec{Name: "tls"})
	if _, err := Consume(ctx, "http", 1); err != nil {
		t.Fatalf("consume over TLS: %v", err)
	}

	t.Setenv("GOVERNOR_ADDR", g.addr)
	t.Setenv("GOVERNOR_API_KEY", teamKey)
	t.Setenv("GOVERNOR_CA_FILE", cert)
	fromEnv, err := Dial(context.Background())
	if err != nil {
		t.Fatalf("dial from the environment: %v", err)
	}
	_ = fromEnv.Close()
	for _, tc := range []struct {
		name string
		opts []Option
		want error
	}{
		{"plain text", []Option{WithCAFile(""), WithTLS(false)}, ErrUnavailable},
		{"unknown CA", []Option{WithCAFile(""), WithTLS(true)}, ErrUnavailable},
		{"missing CA file", []Option{WithCAFile(filepath.Join(dir, "none.pem"))}, ErrInvalid},
	} {
		if _, err := Dial(context.Background(), tc.opts...); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	t.Setenv("GOVERNOR_TLS", "maybe")
	if _, err := Dial(context.Background()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("GOVERNOR_TLS=maybe: %v, want ErrInvalid", err)
	}
}
