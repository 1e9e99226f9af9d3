package server

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"governor.dev/governor/cmd/internal/pgtest"
	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// benchEnv is a governord on the record at url ("" for memory) with a task
// whose "req" quota will not run out, and a session of tenant a.
func benchEnv(b testing.TB, url string) (*env, governorv1connect.GovernorServiceClient, uint64) {
	e := newEnv(b, url)
	cl, _ := e.session(keyA)
	res, err := cl.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{
		Spec: &governorv1.NodeSpec{Name: "bench", Quotas: map[string]int64{"req": 1 << 62}},
	}))
	if err != nil {
		b.Fatal(err)
	}
	return e, cl, res.Msg.Node.Id
}

// run calls op b.N times from one caller, or spread over that many
// goroutines, and reports calls per second.
func run(b *testing.B, callers int, op func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testclock.ProcessCPU()
	if callers > 1 {
		b.SetParallelism((callers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	} else {
		for range b.N {
			if err := op(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64((testclock.ProcessCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/call")
}

// benchHealth runs the health check, the floor of any call, from callers
// goroutines.
func benchHealth(b *testing.B, callers int) {
	e, _, _ := benchEnv(b, "")
	health := grpchealth.NewClient(e.h2c, e.http.URL)
	req := &grpchealth.CheckRequest{}
	run(b, callers, func() error {
		_, err := health.Check(context.Background(), req)
		return err
	})
}

// BenchmarkLoopback compares a consume over loopback through the Connect
// client with the health check on the same server and connection (the
// floor of any call) and with a heartbeat (authentication and the engine,
// but nothing to commit).
func BenchmarkLoopback(b *testing.B) {
	for _, callers := range []int{1, 16} {
		mode := fmt.Sprintf("callers=%d", callers)
		b.Run("health/"+mode, func(b *testing.B) { benchHealth(b, callers) })
		b.Run("heartbeat/"+mode, func(b *testing.B) {
			_, cl, _ := benchEnv(b, "")
			run(b, callers, func() error {
				return call(cl.Heartbeat(context.Background(), connect.NewRequest(&governorv1.HeartbeatRequest{})))
			})
		})
		b.Run("consume/"+mode, func(b *testing.B) {
			_, cl, task := benchEnv(b, "")
			run(b, callers, func() error {
				return call(cl.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: task, Resource: "req", Amount: 1})))
			})
		})
		b.Run("consume-by-key/"+mode, func(b *testing.B) {
			e, _, task := benchEnv(b, "")
			cl := e.client(keyA)
			run(b, callers, func() error {
				return call(cl.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: task, Resource: "req", Amount: 1})))
			})
		})
	}
}

// BenchmarkLoopbackDurable is consume throughput over loopback with the
// record on SQLite and on PostgreSQL, at 16 and 64 callers, next to the
// health check on the same server and connection (the floor of any call).
func BenchmarkLoopbackDurable(b *testing.B) {
	records := []struct {
		name string
		url  func(b *testing.B) string
	}{
		{"sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "governor.db") }},
		{"postgres", func(b *testing.B) string { return pgtest.DSN(b) }},
	}
	for _, callers := range []int{16, 64} {
		mode := fmt.Sprintf("callers=%d", callers)
		b.Run("health/"+mode, func(b *testing.B) { benchHealth(b, callers) })
		for _, rec := range records {
			b.Run("consume/"+rec.name+"/"+mode, func(b *testing.B) {
				_, cl, task := benchEnv(b, rec.url(b))
				run(b, callers, func() error {
					return call(cl.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: task, Resource: "req", Amount: 1})))
				})
			})
		}
	}
}

// BenchmarkTracing is a consume over loopback with tracing off (no
// provider: no interceptor), on with every span kept and batched to an
// exporter that drops them (the daemon's set-up without the network), and
// on with none sampled.
func BenchmarkTracing(b *testing.B) {
	modes := []struct {
		name string
		tp   func() trace.TracerProvider
	}{
		{"off", func() trace.TracerProvider { return nil }},
		{"sampled", func() trace.TracerProvider {
			return sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		}},
		{"unsampled", func() trace.TracerProvider {
			return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
		}},
	}
	for _, callers := range []int{1, 16} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("%s/callers=%d", m.name, callers), func(b *testing.B) {
				tp := m.tp()
				if p, ok := tp.(*sdktrace.TracerProvider); ok {
					b.Cleanup(func() { _ = p.Shutdown(context.Background()) })
				}
				e := newEnvTraced(b, "", tp)
				cl, _ := e.session(keyA)
				res, err := cl.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{
					Spec: &governorv1.NodeSpec{Name: "bench", Quotas: map[string]int64{"req": 1 << 62}},
				}))
				if err != nil {
					b.Fatal(err)
				}
				task := res.Msg.Node.Id
				run(b, callers, func() error {
					return call(cl.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: task, Resource: "req", Amount: 1})))
				})
			})
		}
	}
}
