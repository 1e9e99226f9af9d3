package daemon

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Timeouts of both listeners. Calls may stream or wait for a lease for a
// long time, so there is no write timeout; a client must send its headers
// promptly, and an idle connection is closed after a while.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 5 * time.Minute
)

// listen binds the API (TLS 1.3 with certs, else HTTP/1 and HTTP/2 in plain
// text, h2c, so gRPC works without TLS) and the metrics endpoint, and starts
// serving both.
func (d *Daemon) listen(certs *certificate) error {
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s for the API: %w", d.cfg.Listen, err)
	}
	d.apiAddr, d.tls = ln.Addr(), certs != nil
	handler, err := d.handler()
	if err != nil {
		ln.Close()
		return err
	}
	handler = d.withDashboard(handler)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	if certs != nil {
		protocols.SetHTTP2(true)
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	d.apiHTTP = &http.Server{
		Handler:           handler,
		Protocols:         &protocols,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          httpErrorLog(d.log, "api"),
	}
	serve := func() error { return d.apiHTTP.Serve(ln) }
	if certs != nil {
		d.apiHTTP.TLSConfig = certs.tlsConfig()
		serve = func() error { return d.apiHTTP.ServeTLS(ln, "", "") }
	}
	if d.cfg.MetricsListen != "" {
		mln, err := net.Listen("tcp", d.cfg.MetricsListen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen on %s for metrics: %w", d.cfg.MetricsListen, err)
		}
		d.metricsAddr = mln.Addr()
		mux := http.NewServeMux()
		mux.Handle("/metrics", d.metrics.Handler())
		d.metricsHTTP = &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: readHeaderTimeout,
			IdleTimeout:       idleTimeout,
			ErrorLog:          httpErrorLog(d.log, "metrics"),
		}
		d.goServe("metrics", func() error { return d.metricsHTTP.Serve(mln) })
	}
	d.goServe("api", serve)
	return nil
}

// goServe runs one listener's Serve; a listener that stops other than by
// Shutdown or Close is reported to the supervisor.
func (d *Daemon) goServe(name string, serve func() error) {
	d.serving.Add(1)
	go func() {
		defer d.serving.Done()
		if err := serve(); !errors.Is(err, http.ErrServerClosed) {
			d.serveErr <- fmt.Errorf("%s listener: %w", name, err)
		}
	}()
}
