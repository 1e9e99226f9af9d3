package config

import (
	"math"
	"net"
	"strconv"
)

// DefaultTracingService is the service.name traces are sent under when the
// file names none.
const DefaultTracingService = "governord"

// Tracing sends a span per API call to an OpenTelemetry collector over
// OTLP. It is off unless Endpoint is set.
type Tracing struct {
	// Endpoint is the host:port of an OTLP receiver (4317 for grpc, 4318 for
	// http by convention). Empty: no tracing, and nothing is built for it.
	Endpoint string `yaml:"endpoint"`
	// Protocol is "grpc" (OTLP over gRPC) or "http" (OTLP over HTTP with
	// protobuf bodies). Default: grpc.
	Protocol string `yaml:"protocol"`
	// Insecure sends in plain text; otherwise TLS, checked against CAFile or
	// the system's roots.
	Insecure bool `yaml:"insecure"`
	// CAFile is a PEM file of the certificates that sign the receiver's; empty
	// means the system's roots. Only with TLS.
	CAFile string `yaml:"ca_file"`
	// SampleRatio is the share of traces started here that are kept, from 0
	// (none) to 1 (all). A call that continues a caller's trace follows the
	// caller's decision instead. Default: 1.
	SampleRatio float64 `yaml:"sample_ratio"`
	// ServiceName is the service.name of every span. Default: governord.
	ServiceName string `yaml:"service_name"`
}

// Enabled reports whether traces are sent.
func (t Tracing) Enabled() bool { return t.Endpoint != "" }

// defaultTracing is the section's value for every key the file leaves out.
func defaultTracing() Tracing {
	return Tracing{Protocol: "grpc", SampleRatio: 1, ServiceName: DefaultTracingService}
}

// checkTracing checks the tracing section.
func (c *Config) checkTracing(k *checker) {
	t := c.Tracing
	if !t.Enabled() {
		if t != defaultTracing() {
			k.add("tracing.endpoint", "required when other tracing keys are set: the host:port of an OTLP receiver, such as 127.0.0.1:4317; leave the whole section out to trace nothing")
		}
		return
	}
	if !validEndpoint(t.Endpoint) {
		k.add("tracing.endpoint", "must be host:port with a port from 1 to 65535, such as 127.0.0.1:4317 (grpc) or 127.0.0.1:4318 (http), with no scheme; got %q", t.Endpoint)
	}
	k.oneOf("tracing.protocol", t.Protocol, "grpc", "http")
	if t.Insecure && t.CAFile != "" {
		k.add("tracing.ca_file", "is for TLS, and insecure: true sends in plain text: remove one of them")
	}
	if math.IsNaN(t.SampleRatio) || t.SampleRatio < 0 || t.SampleRatio > 1 {
		k.add("tracing.sample_ratio", "must be a share from 0 (keep no trace started here) to 1 (keep every one), got %v", t.SampleRatio)
	}
	if t.ServiceName == "" {
		k.add("tracing.service_name", "must not be empty: it names governord in the collector (default %s)", DefaultTracingService)
	}
}

// validEndpoint reports whether s is host:port with a host and a port from
// 1 to 65535.
func validEndpoint(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}
