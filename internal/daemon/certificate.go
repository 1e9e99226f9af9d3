package daemon

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
)

// certificate serves the API's certificate and reads it again when its
// certificate or key file changes, so a renewed certificate is served
// without a restart. Safe for concurrent use.
type certificate struct {
	certFile, keyFile string
	log               *slog.Logger

	mu   sync.Mutex       // guards the fields below
	cert *tls.Certificate // what handshakes are given
	seen [2]os.FileInfo   // the two files as they were at the last attempt to read them
}

// loadCertificate reads the pair once; a pair that cannot be read is an
// error at start.
func loadCertificate(certFile, keyFile string, log *slog.Logger) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile, log: log}
	seen, err := c.stat()
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: read the certificate %s and its key %s: %w", certFile, keyFile, err)
	}
	c.cert, c.seen = &cert, seen
	return c, nil
}

// tlsConfig is TLS 1.3 only, with the certificate read through c.
func (c *certificate) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: c.get}
}

// get returns the certificate, first reading the pair again if either file
// changed since the last attempt. A pair that does not load (a renewal
// half-written, a key that does not match) is logged once and the previous
// certificate is kept until the files change again.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now, err := c.stat()
	if err != nil || (sameFile(now[0], c.seen[0]) && sameFile(now[1], c.seen[1])) {
		return c.cert, nil
	}
	c.seen = now
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		c.log.Warn("the TLS certificate changed but does not load; serving the previous one until the files change again",
			"cert_file", c.certFile, "key_file", c.keyFile, "err", err)
		return c.cert, nil
	}
	c.cert = &cert
	c.log.Info("TLS certificate reloaded", "cert_file", c.certFile)
	return c.cert, nil
}

func (c *certificate) stat() ([2]os.FileInfo, error) {
	var out [2]os.FileInfo
	for i, name := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return out, err
		}
		out[i] = fi
	}
	return out, nil
}

// sameFile reports whether b is a plausibly unchanged a: the same file (a
// renewal written elsewhere and renamed into place is a new one), size and
// modification time.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
