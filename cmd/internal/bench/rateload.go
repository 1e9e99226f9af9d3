package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"governor.dev/governor/cmd/internal/testclock"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// Protocol is how the rate-limit load reaches a server.
type Protocol string

// The protocols of the rate-limit load: gRPC over one shared connection
// (grpc-go, h2c), and HTTP/1.1 JSON with one connection per caller.
const (
	GRPC     Protocol = "gRPC"
	HTTPJSON Protocol = "HTTP JSON"
)

// Peer is one Gubernator-compatible server under the rate-limit load.
type Peer struct {
	Name string // as the table's column says it
	// GRPCAddr is the host:port of its gRPC API; "" leaves gRPC out.
	GRPCAddr string
	// HTTPURL is the base URL of its HTTP JSON API (http://host:port);
	// "" leaves HTTP JSON out.
	HTTPURL string
	// Key is sent as Authorization: Bearer; "" sends none.
	Key string
}

// rateCall is the one call of the load: one key, hits 1, a limit no run
// reaches, so every answer is UNDER_LIMIT.
var rateCall = &pb.GetRateLimitsReq{Requests: []*pb.RateLimitReq{{
	Name: "bench", UniqueKey: "one", Hits: 1, Limit: 1_000_000_000, Duration: 1000,
}}}

const rateCallJSON = `{"requests":[{"name":"bench","unique_key":"one","hits":1,"limit":1000000000,"duration":1000}]}`

// LoadResult is what one closed-loop run measured.
type LoadResult struct {
	Calls   int           `json:"calls"`
	Elapsed time.Duration `json:"elapsed_ns"`
	P99     time.Duration `json:"p99_ns"`
	// CPU is the CPU time this whole process spent during the run: the
	// load generator's and, for a server inside the process, the server's.
	// Neighbours on the machine slow a run down but add little to it.
	CPU time.Duration `json:"cpu_ns"`
}

// CPUPerCall is the process's CPU time per call.
func (r LoadResult) CPUPerCall() time.Duration {
	if r.Calls == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Calls)
}

// PerSecond is the run's throughput.
func (r LoadResult) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Elapsed.Seconds()
}

// caller makes one call and says whether it was answered UNDER_LIMIT.
type caller func(ctx context.Context) error

// runLoad runs callers closed loops of call for d after a warm-up of each
// caller's first call, and measures throughput and p99. The first failed
// call ends the run with its error.
func runLoad(ctx context.Context, call func() caller, callers int, d time.Duration) (LoadResult, error) {
	calls := make([]caller, callers)
	for i := range calls {
		calls[i] = call()
		if err := calls[i](ctx); err != nil {
			return LoadResult{}, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lat := make([][]time.Duration, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	cpu := testclock.ProcessCPU()
	began := time.Now()
	end := began.Add(d)
	for i, c := range calls {
		wg.Go(func() {
			for t := time.Now(); t.Before(end); {
				if err := c(ctx); err != nil {
					if ctx.Err() == nil {
						errs[i] = err
						cancel()
					}
					return
				}
				now := time.Now()
				lat[i] = append(lat[i], now.Sub(t))
				t = now
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	cpu = testclock.ProcessCPU() - cpu
	if err := errors.Join(errs...); err != nil {
		return LoadResult{}, err
	}
	all := slices.Concat(lat...)
	if len(all) == 0 {
		return LoadResult{}, fmt.Errorf("no call finished in %s", d)
	}
	slices.Sort(all)
	return LoadResult{Calls: len(all), Elapsed: elapsed, P99: all[(len(all)*99+99)/100-1], CPU: cpu}, nil
}

// grpcLoad runs the load over gRPC: callers goroutines share one
// connection to addr.
func grpcLoad(ctx context.Context, p Peer, callers int, d time.Duration) (LoadResult, error) {
	conn, err := grpc.NewClient("passthrough:///"+p.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return LoadResult{}, fmt.Errorf("connect to %s over gRPC: %w", p.GRPCAddr, err)
	}
	defer conn.Close()
	if p.Key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+p.Key)
	}
	call := func() caller {
		return func(ctx context.Context) error {
			var res pb.GetRateLimitsResp
			if err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", rateCall, &res); err != nil {
				return fmt.Errorf("%s over gRPC: %w", p.Name, err)
			}
			return underLimit(p.Name, &res)
		}
	}
	return runLoad(ctx, call, callers, d)
}

// underLimit checks an answer of the load's call.
func underLimit(name string, res *pb.GetRateLimitsResp) error {
	if len(res.Responses) != 1 || res.Responses[0].Status != pb.Status_UNDER_LIMIT || res.Responses[0].Error != "" {
		return fmt.Errorf("%s answered %v, want one UNDER_LIMIT", name, res)
	}
	return nil
}

// httpLoad runs the load over HTTP/1.1 JSON: each caller has a connection
// of its own.
func httpLoad(ctx context.Context, p Peer, callers int, d time.Duration) (LoadResult, error) {
	url := p.HTTPURL + "/v1/GetRateLimits"
	var clients []*http.Client
	defer func() {
		for _, c := range clients {
			c.CloseIdleConnections()
		}
	}()
	call := func() caller {
		c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
		clients = append(clients, c)
		return func(ctx context.Context) error { return postRateCall(ctx, c, url, p) }
	}
	return runLoad(ctx, call, callers, d)
}

// underLimitJSON is how an UNDER_LIMIT answer reads in the gateway's JSON.
var underLimitJSON = []byte(`"status":"UNDER_LIMIT"`)

// postRateCall posts the load's call and checks the answer.
func postRateCall(ctx context.Context, c *http.Client, url string, p Peer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(rateCallJSON)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.Key != "" {
		req.Header.Set("Authorization", "Bearer "+p.Key)
	}
	res, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%s over HTTP: %w", p.Name, err)
	}
	data, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return fmt.Errorf("%s over HTTP: read the answer: %w", p.Name, err)
	}
	if res.StatusCode != http.StatusOK || !bytes.Contains(data, underLimitJSON) {
		return fmt.Errorf("%s over HTTP answered %d %s, want 200 and UNDER_LIMIT", p.Name, res.StatusCode, data)
	}
	return nil
}
