package gubernator

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"

	"governor.dev/governor/cmd/internal/engine"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// BenchmarkGRPCHandler is the gRPC path's own share of a GetRateLimits
// call of one request (one key, hits 1, a limit no run reaches), without
// the transport: decode the message as grpc-go hands it over, check the
// key, apply the request on a real engine, and encode the answer. Its
// allocs/op are what the handler adds to grpc-go's own.
//
//	go test -run '^$' -bench GRPCHandler -benchmem ./cmd/internal/gubernator
func BenchmarkGRPCHandler(b *testing.B) {
	eng := engine.New(engine.Options{Clock: fixedClock{time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)}})
	tenant, err := eng.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "acme"})
	if err != nil {
		b.Fatal(err)
	}
	svc, err := New(Options{Limiter: NewLimiter(eng, tenant.ID, "gubernator"), Record: &memoryRecord{failed: make(chan struct{})},
		Keys: matchKey, Tenant: "acme", Address: "127.0.0.1:7070", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	codec := newWireCodec()
	data := mustMarshal(b, &pb.GetRateLimitsReq{Requests: []*pb.RateLimitReq{
		{Name: "bench", UniqueKey: "one", Hits: 1, Limit: 1_000_000_000, Duration: 1000}}})
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(
		"authorization", "Bearer "+keyTenant, "content-type", "application/grpc", "user-agent", "grpc-go/1.85.0", "te", "trailers"))
	in := mem.BufferSlice{mem.SliceBuffer(data)}
	dec := func(v any) error { return codec.Unmarshal(in, v) }
	b.ReportAllocs()
	for b.Loop() {
		res, err := grpcGetRateLimits(svc, ctx, dec, nil)
		if err != nil {
			b.Fatal(err)
		}
		out, err := codec.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		if r := res.(*pb.GetRateLimitsResp).Responses[0]; r.Status != pb.Status_UNDER_LIMIT || r.Error != "" {
			b.Fatalf("answered %v", r)
		}
		out.Free()
	}
}
