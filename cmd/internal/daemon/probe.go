package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"connectrpc.com/grpchealth"

	"governor.dev/governor/cmd/internal/config"
)

// probeTimeout bounds -health: a supervisor's health check must end.
const probeTimeout = 5 * time.Second

// probe is -health: it asks the governord that cfg describes, at its listen
// address (on Linux a wildcard address such as 0.0.0.0 reaches the machine
// itself), whether it serves, with
// the standard health check, which takes no key. Over TLS it trusts the
// configured certificate, as a client on the same machine may.
func probe(ctx context.Context, cfg *config.Config) error {
	host, port, err := net.SplitHostPort(cfg.Listen)
	switch {
	case err != nil:
		return fmt.Errorf("listen %q is not host:port: %w", cfg.Listen, err)
	case port == "0":
		return fmt.Errorf("listen %q names no fixed port to probe", cfg.Listen)
	}
	if host == "" {
		host = "localhost"
	}
	client := &http.Client{Timeout: probeTimeout}
	scheme := "http"
	if cfg.TLS.Enabled() {
		pem, err := os.ReadFile(cfg.TLS.CertFile)
		if err != nil {
			return fmt.Errorf("read the certificate to trust: %w", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}}
		scheme = "https"
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	url := scheme + "://" + net.JoinHostPort(host, port)
	res, err := grpchealth.NewClient(client, url).Check(ctx, &grpchealth.CheckRequest{})
	if err != nil {
		return fmt.Errorf("%s does not answer the health check: %w", url, err)
	}
	if res.Status != grpchealth.StatusServing {
		return fmt.Errorf("%s is not serving (%s)", url, res.Status)
	}
	return nil
}
