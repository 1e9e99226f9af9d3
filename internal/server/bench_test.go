package server

import (
	"context"
	"runtime"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// benchCallers are the concurrent callers of the parallel benchmarks.
const benchCallers = 16

// benchEnv is an in-memory governord with a task whose "req" quota will not
// run out, and a session of tenant a.
func benchEnv(b *testing.B) (*env, governorv1connect.GovernorServiceClient, uint64) {
	e := newEnv(b, "")
	cl, _ := e.session(keyA)
	res, err := cl.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{
		Spec: &governorv1.NodeSpec{Name: "bench", Quotas: map[string]int64{"req": 1 << 62}},
	}))
	if err != nil {
		b.Fatal(err)
	}
	return e, cl, res.Msg.Node.Id
}

// run calls op b.N times from one caller, or spread over benchCallers
// goroutines, and reports calls per second.
func run(b *testing.B, parallel bool, op func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	if parallel {
		b.SetParallelism((benchCallers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
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
}

// BenchmarkLoopback compares a consume over loopback through the Connect
// client with the health check on the same server and connection (the
// floor of any call) and with a heartbeat (authentication and the engine,
// but nothing to commit).
func BenchmarkLoopback(b *testing.B) {
	for _, mode := range []struct {
		name     string
		parallel bool
	}{{"callers=1", false}, {"callers=16", true}} {
		b.Run("health/"+mode.name, func(b *testing.B) {
			e, _, _ := benchEnv(b)
			health := grpchealth.NewClient(e.h2c, e.http.URL)
			req := &grpchealth.CheckRequest{}
			run(b, mode.parallel, func() error {
				_, err := health.Check(context.Background(), req)
				return err
			})
		})
		b.Run("heartbeat/"+mode.name, func(b *testing.B) {
			_, cl, _ := benchEnv(b)
			run(b, mode.parallel, func() error {
				return call(cl.Heartbeat(context.Background(), connect.NewRequest(&governorv1.HeartbeatRequest{})))
			})
		})
		b.Run("consume/"+mode.name, func(b *testing.B) {
			_, cl, task := benchEnv(b)
			run(b, mode.parallel, func() error {
				return call(cl.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: task, Resource: "req", Amount: 1})))
			})
		})
		b.Run("consume-by-key/"+mode.name, func(b *testing.B) {
			e, _, task := benchEnv(b)
			cl := e.client(keyA)
			run(b, mode.parallel, func() error {
				return call(cl.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: task, Resource: "req", Amount: 1})))
			})
		})
	}
}
