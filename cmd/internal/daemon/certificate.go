package daemon

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// expiryWarning is how long before its certificate expires governord starts
// to warn: at start, and at the first handshake once that time has come.
const expiryWarning = 14 * 24 * time.Hour

// certificate serves the API's certificate and reads it again when its
// certificate or key file changes, so a renewed certificate is served
// without a restart. Safe for concurrent use.
type certificate struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time

	mu     sync.Mutex       // guards the fields below
	cert   *tls.Certificate // what handshakes are given
	seen   [2]os.FileInfo   // the two files as they were at the last attempt to read them
	warned expiryState      // what was last said about cert's expiry
}

// expiryState is how near its end a certificate is, in the steps governord
// logs once each.
type expiryState int

const (
	expiryFar expiryState = iota
	expirySoon
	expiryPassed
)

// loadCertificate reads the pair once. A pair that is missing, unreadable,
// not a pair, not yet valid or expired is an error at start wrapping
// ErrCertificate; one that expires within expiryWarning is logged.
func loadCertificate(certFile, keyFile string, log *slog.Logger, now func() time.Time) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile, log: log, now: now}
	seen, err := c.stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCertificate, err)
	}
	cert, err := c.read()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCertificate, err)
	}
	c.cert, c.seen = cert, seen
	c.checkExpiryLocked()
	return c, nil
}

// read loads the pair and refuses a certificate outside its validity.
func (c *certificate) read() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return nil, fmt.Errorf("read the certificate %s and its key %s: %w", c.certFile, c.keyFile, err)
	}
	now, leaf := c.now(), cert.Leaf
	switch {
	case now.After(leaf.NotAfter):
		return nil, fmt.Errorf("the certificate %s expired at %s: renew it", c.certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return nil, fmt.Errorf("the certificate %s is not valid before %s: check the clock or the certificate", c.certFile, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return &cert, nil
}

// tlsConfig is TLS 1.3 only, with the certificate read through c.
func (c *certificate) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: c.get}
}

// get returns the certificate, first reading the pair again if either file
// changed since the last attempt. A pair that does not load (a renewal
// half-written, a key that does not match, an expired certificate) is
// logged once and the previous certificate is kept until the files change
// again. The served certificate's coming expiry is logged once, and its
// expiry once more.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.checkExpiryLocked()
	now, err := c.stat()
	if err != nil || (sameFile(now[0], c.seen[0]) && sameFile(now[1], c.seen[1])) {
		return c.cert, nil
	}
	c.seen = now
	cert, err := c.read()
	if err != nil {
		c.log.Warn("the TLS certificate changed but does not load; serving the previous one until the files change again",
			"cert_file", c.certFile, "key_file", c.keyFile, "err", err)
		return c.cert, nil
	}
	c.cert, c.warned = cert, expiryFar
	c.log.Info("TLS certificate reloaded", "cert_file", c.certFile, "expires", cert.Leaf.NotAfter.UTC())
	return c.cert, nil
}

// checkExpiryLocked logs, once per step, that the served certificate
// expires within expiryWarning or has expired.
func (c *certificate) checkExpiryLocked() {
	end := c.cert.Leaf.NotAfter
	left := end.Sub(c.now())
	switch {
	case left < 0 && c.warned < expiryPassed:
		c.warned = expiryPassed
		c.log.Error("the TLS certificate has expired; clients refuse it until it is renewed",
			"cert_file", c.certFile, "expired", end.UTC())
	case left >= 0 && left < expiryWarning && c.warned < expirySoon:
		c.warned = expirySoon
		c.log.Warn("the TLS certificate expires soon: renew it (write the new files and rename them into place)",
			"cert_file", c.certFile, "expires", end.UTC(), "left", left.Round(time.Minute))
	}
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
