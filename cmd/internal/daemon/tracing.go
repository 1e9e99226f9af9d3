package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"

	"governor.dev/governor/cmd/internal/config"
)

// tracingFlushTimeout bounds how long a stop waits for the last spans to
// reach the collector.
const tracingFlushTimeout = 5 * time.Second

// newTracer builds the tracer provider of the tracing section: spans are
// batched and sent over OTLP to its endpoint, under its service name, and
// sampled by its ratio unless a call continues a caller's trace, whose
// decision it follows. Nil when tracing is off: nothing is built. The
// exporter connects lazily, so a collector that is down delays nothing; a
// batch it could not send is a warning in log, where OTel's process-wide
// error handler is pointed.
func newTracer(ctx context.Context, t config.Tracing, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	if !t.Enabled() {
		return nil, nil
	}
	exp, err := newExporter(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("spans could not be sent to the tracing endpoint; they are dropped", "endpoint", t.Endpoint, "err", err)
	}))
	res := resource.NewSchemaless(attribute.String("service.name", t.ServiceName))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(t.SampleRatio))),
	), nil
}

// newExporter is the OTLP exporter of t's protocol and transport security.
func newExporter(ctx context.Context, t config.Tracing) (sdktrace.SpanExporter, error) {
	var tc *tls.Config
	if !t.Insecure {
		var err error
		if tc, err = tracingTLS(t.CAFile); err != nil {
			return nil, err
		}
	}
	if t.Protocol == "http" {
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(t.Endpoint)}
		if tc == nil {
			opts = append(opts, otlptracehttp.WithInsecure())
		} else {
			opts = append(opts, otlptracehttp.WithTLSClientConfig(tc))
		}
		return otlptracehttp.New(ctx, opts...)
	}
	opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(t.Endpoint)}
	if tc == nil {
		opts = append(opts, otlptracegrpc.WithInsecure())
	} else {
		opts = append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(tc)))
	}
	return otlptracegrpc.New(ctx, opts...)
}

// tracingTLS is the TLS configuration towards the collector: TLS 1.2 at
// least, with the roots in caFile, or the system's when it is empty.
func tracingTLS(caFile string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return tc, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read tracing.ca_file: %w", err)
	}
	tc.RootCAs = x509.NewCertPool()
	if !tc.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tracing.ca_file %s holds no PEM certificate", caFile)
	}
	return tc, nil
}

// stopTracing sends the spans still batched and stops the exporter. A
// collector that cannot be reached loses those spans and is logged; it does
// not make the stop fail, since no acknowledged state depends on it.
func (d *Daemon) stopTracing() {
	if d.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
	defer cancel()
	if err := d.tracer.Shutdown(ctx); err != nil {
		d.log.Warn("the last spans could not be sent to the tracing endpoint", "endpoint", d.cfg.Tracing.Endpoint, "err", err)
	}
}
