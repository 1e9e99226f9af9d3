package daemon

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"governor.dev/governor/cmd/internal/config"
)

// collector is an OTLP receiver on loopback that keeps what it is sent.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	got  chan *coltracepb.ExportTraceServiceRequest
	keys chan string // the X-Collector-Key header of each HTTP export
}

func newCollector() *collector {
	return &collector{got: make(chan *coltracepb.ExportTraceServiceRequest, 64), keys: make(chan string, 64)}
}

// Export is the gRPC receiver's method.
func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.got <- req
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// serveHTTP starts the OTLP over HTTP receiver and returns its host:port.
func (c *collector) serveHTTP(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || err != nil || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		c.got <- &req
		c.keys <- r.Header.Get("X-Collector-Key")
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// serveGRPC starts the OTLP over gRPC receiver and returns its host:port.
func (c *collector) serveGRPC(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// spans are the names of the spans received so far, each with its
// resource's service.name.
func (c *collector) spans() map[string]string {
	out := map[string]string{}
	for {
		select {
		case req := <-c.got:
			for _, rs := range req.ResourceSpans {
				service := ""
				for _, kv := range rs.GetResource().GetAttributes() {
					if kv.Key == "service.name" {
						service = kv.GetValue().GetStringValue()
					}
				}
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						out[s.Name] = service
					}
				}
			}
		default:
			return out
		}
	}
}

// TestTracingSendsSpans: with a tracing endpoint configured, a call's span
// reaches the collector over either protocol, under the configured service
// name, at the latest when governord stops; the exporter sends the headers
// of OTEL_EXPORTER_OTLP_HEADERS.
func TestTracingSendsSpans(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=k123")
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := newCollector()
			endpoint := c.serveHTTP(t)
			if protocol == "grpc" {
				endpoint = c.serveGRPC(t)
			}
			cfg := testConfig("")
			cfg.Tracing = config.Tracing{Endpoint: endpoint, Protocol: protocol, Insecure: true, SampleRatio: 1, ServiceName: "governord-test"}
			d := startDaemon(t, cfg, Options{})
			if d.tracer == nil {
				t.Fatal("a configured tracing endpoint built no tracer")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := newJSONAPI(d.URL()).consume(ctx, testTeamKey, uint64(d.tenants["team-a"]), "http", 1); err != nil {
				t.Fatal(err)
			}
			if err := d.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			got := c.spans()
			if service, ok := got["governor.v1.GovernorService/Consume"]; !ok || service != "governord-test" {
				t.Fatalf("the collector got spans %v; want the consume's under service governord-test", got)
			}
			if protocol == "http" {
				if key := <-c.keys; key != "k123" {
					t.Errorf("the export carried X-Collector-Key %q, want k123 from OTEL_EXPORTER_OTLP_HEADERS", key)
				}
			}
		})
	}
}

// TestTracingOffByDefault: without a tracing section nothing is built for
// tracing and the API traces nothing.
func TestTracingOffByDefault(t *testing.T) {
	d := startDaemon(t, testConfig(""), Options{})
	if d.tracer != nil || d.tracing != nil {
		t.Fatalf("a daemon without tracing configured has tracer %v and tracing %v", d.tracer, d.tracing)
	}
}

// TestTracingFailureIsLogged: a collector that refuses the spans costs the
// calls nothing and the stop nothing; the dropped spans are a warning in
// governord's log.
func TestTracingFailureIsLogged(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer refuse.Close()
	cfg := testConfig("")
	cfg.Tracing = config.Tracing{Endpoint: refuse.Listener.Addr().String(), Protocol: "http", Insecure: true, SampleRatio: 1, ServiceName: "governord"}
	var log syncBuffer
	d := startDaemon(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := newJSONAPI(d.URL()).consume(ctx, testTeamKey, uint64(d.tenants["team-a"]), "http", 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("stop: %v; a collector that refuses spans must not fail it", err)
	}
	if !strings.Contains(log.String(), "spans could not be sent to the tracing endpoint; they are dropped") {
		t.Fatalf("the log says nothing of the dropped spans:\n%s", log.String())
	}
}
