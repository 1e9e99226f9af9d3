package config

import (
	"errors"
	"testing"
)

// TestTracingMistakes checks every message the tracing section can produce,
// whole: a mistake refuses the whole file.
func TestTracingMistakes(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"keys without an endpoint", "tracing:\n  insecure: true\n",
			"t.yaml:1: tracing.endpoint: required when other tracing keys are set: the host:port of an OTLP receiver, such as 127.0.0.1:4317; leave the whole section out to trace nothing"},
		{"endpoint with a scheme", "tracing:\n  endpoint: http://collector:4318\n",
			`t.yaml:2: tracing.endpoint: must be host:port with a port from 1 to 65535, such as 127.0.0.1:4317 (grpc) or 127.0.0.1:4318 (http), with no scheme; got "http://collector:4318"`},
		{"endpoint port 0", "tracing:\n  endpoint: 127.0.0.1:0\n",
			`t.yaml:2: tracing.endpoint: must be host:port with a port from 1 to 65535, such as 127.0.0.1:4317 (grpc) or 127.0.0.1:4318 (http), with no scheme; got "127.0.0.1:0"`},
		{"unknown protocol", "tracing:\n  endpoint: 127.0.0.1:4317\n  protocol: http/json\n",
			`t.yaml:3: tracing.protocol: must be one of grpc, http; got "http/json"`},
		{"insecure with a CA file", "tracing:\n  endpoint: 127.0.0.1:4317\n  insecure: true\n  ca_file: ca.pem\n",
			"t.yaml:4: tracing.ca_file: is for TLS, and insecure: true sends in plain text: remove one of them"},
		{"ratio above 1", "tracing:\n  endpoint: 127.0.0.1:4317\n  sample_ratio: 1.5\n",
			"t.yaml:3: tracing.sample_ratio: must be a share from 0 (keep no trace started here) to 1 (keep every one), got 1.5"},
		{"negative ratio", "tracing:\n  endpoint: 127.0.0.1:4317\n  sample_ratio: -0.1\n",
			"t.yaml:3: tracing.sample_ratio: must be a share from 0 (keep no trace started here) to 1 (keep every one), got -0.1"},
		{"empty service name", "tracing:\n  endpoint: 127.0.0.1:4317\n  service_name: \"\"\n",
			"t.yaml:3: tracing.service_name: must not be empty: it names governord in the collector (default governord)"},
		{"unknown key", "tracing:\n  url: 127.0.0.1:4317\n",
			"t.yaml:2: tracing.url: unknown key; allowed here: endpoint, protocol, insecure, ca_file, sample_ratio, service_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "t.yaml", env(nil))
			var cfgErr *Error
			if !errors.As(err, &cfgErr) || c != nil {
				t.Fatalf("got %+v, %v; want no config and a *Error", c, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestTracingSection checks the defaults (off) and valid sections.
func TestTracingSection(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       Tracing
		enabled    bool
	}{
		{"left out: off", "", Tracing{Protocol: "grpc", SampleRatio: 1, ServiceName: "governord"}, false},
		{"an endpoint alone: grpc over TLS, every trace", "tracing: {endpoint: collector:4317}\n",
			Tracing{Endpoint: "collector:4317", Protocol: "grpc", SampleRatio: 1, ServiceName: "governord"}, true},
		{"every key", "tracing: {endpoint: 127.0.0.1:4318, protocol: http, insecure: true, sample_ratio: 0.25, service_name: gov-eu}\n",
			Tracing{Endpoint: "127.0.0.1:4318", Protocol: "http", Insecure: true, SampleRatio: 0.25, ServiceName: "gov-eu"}, true},
		{"ratio 0 keeps only continued traces", "tracing: {endpoint: '[::1]:4317', ca_file: ca.pem, sample_ratio: 0}\n",
			Tracing{Endpoint: "[::1]:4317", Protocol: "grpc", CAFile: "ca.pem", ServiceName: "governord"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "t.yaml", env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if c.Tracing != tt.want || c.Tracing.Enabled() != tt.enabled {
				t.Errorf("got %+v (enabled %v), want %+v (enabled %v)", c.Tracing, c.Tracing.Enabled(), tt.want, tt.enabled)
			}
		})
	}
	if Default().Tracing.Enabled() {
		t.Errorf("Default() traces: %+v", Default().Tracing)
	}
}
