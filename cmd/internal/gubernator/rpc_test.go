package gubernator

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// grpcConn is a grpc-go connection to the fixture, as Gubernator's own
// clients make one.
func grpcConn(t *testing.T, f *fixture) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// withKey adds the bearer key as gRPC metadata.
func withKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+key)
}

// TestGRPCClient calls both methods by their full names through grpc-go,
// with and without a key.
func TestGRPCClient(t *testing.T) {
	f := start(t, under)
	conn := grpcConn(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	in := &pb.GetRateLimitsReq{Requests: []*pb.RateLimitReq{
		{Name: "requests_per_sec", UniqueKey: "account:1", Hits: 3, Limit: 10, Duration: 1000},
		{Name: "requests_per_sec", UniqueKey: "", Hits: 1, Limit: 10, Duration: 1000},
	}}
	out := &pb.GetRateLimitsResp{}
	if err := conn.Invoke(withKey(ctx, keyTenant), "/pb.gubernator.V1/GetRateLimits", in, out); err != nil {
		t.Fatal(err)
	}
	want := &pb.GetRateLimitsResp{Responses: []*pb.RateLimitResp{
		{Status: pb.Status_UNDER_LIMIT, Limit: 10, Remaining: 7, ResetTime: 1_700_000_000_000, Metadata: map[string]string{"owner": f.addr}},
		{Error: `unique_key is required, such as "account:12345".`},
	}}
	if !proto.Equal(out, want) {
		t.Errorf("got  %v\nwant %v", out, want)
	}

	err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", in, out)
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("without a key: %v; want Unauthenticated", err)
	}
	err = conn.Invoke(withKey(ctx, keyOther), "/pb.gubernator.V1/GetRateLimits", in, out)
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("with another tenant's key: %v; want PermissionDenied", err)
	}

	health := &pb.HealthCheckResp{}
	if err := conn.Invoke(ctx, "/pb.gubernator.V1/HealthCheck", &pb.HealthCheckReq{}, health); err != nil {
		t.Fatal(err)
	}
	if want := (&pb.HealthCheckResp{Status: "healthy", PeerCount: 1, AdvertiseAddress: f.addr}); !proto.Equal(health, want) {
		t.Errorf("health %v, want %v", health, want)
	}
}
