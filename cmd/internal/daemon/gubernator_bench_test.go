package daemon

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"governor.dev/governor/cmd/internal/testclock"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// BenchmarkHTTPJSON compares, over HTTP/1.1 JSON on loopback, Gubernator's
// GetRateLimits (one key, hits 1) with governord's own Consume (one unit on
// the tenant) from 16 and 64 connections, each call answered only once it
// is on record. It reports requests per second and the 99th percentile
// latency.
//
//	go test -run '^$' -bench HTTPJSON -benchtime 20000x ./cmd/internal/daemon
func BenchmarkHTTPJSON(b *testing.B) {
	loads := []struct{ name, path, body, ok string }{
		{"GetRateLimits", "/v1/GetRateLimits",
			`{"requests":[{"name":"bench","unique_key":"one","hits":1,"limit":1000000000,"duration":1000}]}`, `"status":"UNDER_LIMIT"`},
		{"Consume", "/governor.v1.GovernorService/Consume", `{"node_id":0,"resource":"http","amount":1}`, `"remaining"`},
	}
	for _, record := range []string{"memory", "sqlite"} {
		for _, conns := range []int{16, 64} {
			for _, load := range loads {
				b.Run(record+"/"+load.name+"/conns="+strconv.Itoa(conns), func(b *testing.B) {
					url := ""
					if record == "sqlite" {
						url = "sqlite:" + filepath.Join(b.TempDir(), "governor.db")
					}
					cfg := guberConfig(url)
					cfg.Tenants[0].Quotas = map[string]int64{"http": math.MaxInt64 / 2}
					d, err := Start(b.Context(), cfg, Options{Logger: quietLog()})
					if err != nil {
						b.Fatal(err)
					}
					defer func() { _ = d.Stop(b.Context()) }()
					hammer(b, d.URL()+load.path, []byte(load.body), []byte(load.ok), conns)
				})
			}
		}
	}
}

// hammer sends b.N POSTs of body to url from conns clients of one
// connection each, checks each answer holds ok, and reports requests per
// second and p99.
func hammer(b *testing.B, url string, body, ok []byte, conns int) {
	clients := make([]*http.Client, conns)
	for i := range clients {
		clients[i] = &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
		post(b, clients[i], url, body, ok) // open the connection before timing
	}
	closedLoop(b, conns, func(caller int) { post(b, clients[caller], url, body, ok) })
	for _, c := range clients {
		c.CloseIdleConnections()
	}
}

// post sends one call and fails the benchmark unless it is answered 200
// with ok in the body.
func post(b *testing.B, c *http.Client, url string, body, ok []byte) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testTeamKey)
	res, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Contains(data, ok) {
		b.Errorf("%s: %d %s", url, res.StatusCode, data)
	}
}

// BenchmarkGRPC sends Gubernator's GetRateLimits (one key, hits 1) over gRPC
// from callers goroutines sharing one grpc-go connection to governord in
// this process, each call answered once it is on record, and reports
// requests per second, p99 and the process's CPU time per call (client
// included), which neighbours on a shared machine disturb far less.
//
//	go test -run '^$' -bench GRPC -benchtime 20000x ./cmd/internal/daemon
func BenchmarkGRPC(b *testing.B) {
	for _, record := range []string{"memory", "sqlite"} {
		for _, callers := range []int{16, 64} {
			b.Run(record+"/callers="+strconv.Itoa(callers), func(b *testing.B) {
				url := ""
				if record == "sqlite" {
					url = "sqlite:" + filepath.Join(b.TempDir(), "governor.db")
				}
				d, err := Start(b.Context(), guberConfig(url), Options{Logger: quietLog()})
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = d.Stop(b.Context()) }()
				conn, err := grpc.NewClient("passthrough:///"+d.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				ctx := metadata.AppendToOutgoingContext(b.Context(), "authorization", "Bearer "+testTeamKey)
				req := &pb.GetRateLimitsReq{Requests: []*pb.RateLimitReq{{Name: "bench", UniqueKey: "one", Hits: 1, Limit: 1_000_000_000, Duration: 1000}}}
				call := func(int) {
					var res pb.GetRateLimitsResp
					if err := conn.Invoke(ctx, "/pb.gubernator.V1/GetRateLimits", req, &res); err != nil || res.Responses[0].Status != pb.Status_UNDER_LIMIT {
						b.Errorf("got %v, %v; want UNDER_LIMIT", &res, err)
					}
				}
				call(0) // connect before timing
				before := commitTotals(b, d)
				closedLoop(b, callers, call)
				reportCommits(b, before, commitTotals(b, d))
			})
		}
	}
}

// closedLoop makes b.N calls from callers goroutines, each starting its
// next call when the last is answered (call gets the caller's number), and
// reports requests per second, p99 and the process's CPU time per call.
func closedLoop(b *testing.B, callers int, call func(caller int)) {
	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu := testclock.ProcessCPU()
	began := time.Now()
	for c := range callers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				t := time.Now()
				call(c)
				latencies[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	cpu = testclock.ProcessCPU() - cpu
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/call")
	b.ReportMetric(0, "ns/op")
}

// commits are the writer's totals as the metrics count them: commits,
// events and seconds spent committing.
type commits struct{ n, events, seconds float64 }

// commitTotals reads the commit totals from d's metrics.
func commitTotals(b *testing.B, d *Daemon) commits {
	rec := httptest.NewRecorder()
	d.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	series := parseMetrics(rec.Body)
	c := commits{series["governor_commit_batch_events_count"], series["governor_commit_batch_events_sum"], series["governor_commit_duration_seconds_sum"]}
	if c.n == 0 {
		b.Fatal("the metrics count no commit")
	}
	return c
}

// reportCommits reports the events per commit and milliseconds per commit
// between two readings.
func reportCommits(b *testing.B, before, after commits) {
	n := after.n - before.n
	if n == 0 {
		return
	}
	b.ReportMetric((after.events-before.events)/n, "events/commit")
	b.ReportMetric(1000*(after.seconds-before.seconds)/n, "ms/commit")
}
