package gubernator

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// TestGRPCConcurrentCallsKeepTheirOwnRequests: grpc-go's path decodes
// requests into structs it reuses from call to call; callers sharing one
// connection, with batches of different sizes at once, each get the
// answers to their own requests, in order.
func TestGRPCConcurrentCallsKeepTheirOwnRequests(t *testing.T) {
	f := start(t, under)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := f.svc.GRPCServer()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithTimeout(withKey(context.Background(), keyTenant), 30*time.Second)
	defer cancel()
	const callers, calls = 16, 20
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				n := 1 + (c+i)%4 // batches of 1 to 4 requests
				req := &pb.GetRateLimitsReq{}
				for j := range n {
					limit := int64(1 + c*10_000 + i*10 + j) // every request of the test has its own limit
					req.Requests = append(req.Requests, &pb.RateLimitReq{
						Name: fmt.Sprint("caller", c), UniqueKey: fmt.Sprint("call", i, "-", j), Hits: 1, Limit: limit, Duration: 1000})
				}
				var res pb.GetRateLimitsResp
				if err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", req, &res); err != nil {
					t.Error(err)
					return
				}
				if len(res.Responses) != n {
					t.Errorf("caller %d call %d: %d answers to %d requests", c, i, len(res.Responses), n)
					return
				}
				for j, r := range res.Responses {
					if want := req.Requests[j].Limit; r.Limit != want || r.Remaining != want-1 || r.Error != "" {
						t.Errorf("caller %d call %d request %d: answered %v, want limit %d remaining %d", c, i, j, r, want, want-1)
					}
				}
			}
		})
	}
	wg.Wait()
}
