package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"governor.dev/governor/cmd/internal/gubernator"
)

// Timeouts of both listeners. Calls may stream or wait for a lease for a
// long time, so there is no write timeout; a client must send its headers
// promptly, and an idle connection is closed after a while. The API's
// request bodies are bounded too (DefaultBodyTimeout).
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 5 * time.Minute
)

// DefaultBodyTimeout is how long an API request may take to arrive, body
// included, when Options.BodyTimeout is zero: http.Server's ReadTimeout,
// which bounds reading the request (per stream over HTTP/2) but not the
// answer, so a watch stream or an acquire that waits is not cut off. Every
// call's request is one bounded message, so a client slower than this (one
// byte every few seconds, holding a connection and a goroutine) is cut off.
const DefaultBodyTimeout = 20 * time.Second

// listeners are the bound sockets of a daemon, before anything serves them.
type listeners struct {
	api     net.Listener
	metrics net.Listener // nil when metrics are off
}

// bind binds the API's address and the metrics endpoint's. It runs before
// anything else is created, so a busy or unusable address leaves nothing
// behind; its errors wrap ErrAddress.
func bind(apiAddr, metricsAddr string) (*listeners, error) {
	ln, err := net.Listen("tcp", apiAddr)
	if err != nil {
		return nil, fmt.Errorf("%w: listen on %s for the API: %w", ErrAddress, apiAddr, err)
	}
	l := &listeners{api: ln}
	if metricsAddr != "" {
		if l.metrics, err = net.Listen("tcp", metricsAddr); err != nil {
			ln.Close()
			return nil, fmt.Errorf("%w: listen on %s for metrics: %w", ErrAddress, metricsAddr, err)
		}
	}
	return l, nil
}

// close closes both listeners; for a start that fails before serving.
func (l *listeners) close() {
	l.api.Close()
	if l.metrics != nil {
		l.metrics.Close()
	}
}

// serve starts serving the API (TLS 1.3 with certs, else HTTP/1 and HTTP/2
// in plain text, h2c, so gRPC works without TLS) and the metrics endpoint on
// the bound listeners.
func (d *Daemon) serve(l *listeners, certs *certificate) error {
	d.apiAddr, d.tls = l.api.Addr(), certs != nil
	handler, err := d.handler()
	if err != nil {
		return err
	}
	handler = d.withDashboard(d.gate(handler))
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
		ReadTimeout:       d.bodyTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          httpErrorLog(d.log, "api"),
	}
	serve := func() error { return d.apiHTTP.Serve(l.api) }
	switch {
	case certs != nil:
		d.apiHTTP.TLSConfig = certs.tlsConfig()
		serve = func() error { return d.apiHTTP.ServeTLS(l.api, "", "") }
	case d.guber != nil:
		serve = d.serveGRPC(l.api)
	}
	if l.metrics != nil {
		d.metricsAddr = l.metrics.Addr()
		mux := http.NewServeMux()
		mux.Handle("/metrics", d.metrics.Handler())
		d.metricsHTTP = &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: readHeaderTimeout,
			IdleTimeout:       idleTimeout,
			ErrorLog:          httpErrorLog(d.log, "metrics"),
		}
		d.goServe("metrics", func() error { return d.metricsHTTP.Serve(l.metrics) })
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

// serveGRPC shares ln between net/http and grpc-go: connections whose
// first call is gRPC to Gubernator's service are served by grpc-go's own
// transport, every other connection by net/http as before. It starts
// grpc-go and returns how to serve net/http.
func (d *Daemon) serveGRPC(ln net.Listener) func() error {
	r := newRouter(ln, readHeaderTimeout, gubernator.GRPCPrefix)
	d.grpcAPI = d.guber.GRPCServer(grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: idleTimeout}))
	d.goServe("api gRPC", func() error {
		if err := d.grpcAPI.Serve(r.GRPC()); err != nil {
			return err
		}
		return http.ErrServerClosed // Serve returns nil after Stop
	})
	return func() error { return d.apiHTTP.Serve(r.HTTP()) }
}

// stopGRPC stops grpc-go's server, if any, letting its calls in flight
// finish until ctx ends and cutting off those still running then.
func (d *Daemon) stopGRPC(ctx context.Context) {
	if d.grpcAPI == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		d.grpcAPI.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		d.grpcAPI.Stop()
		<-done
	}
}
