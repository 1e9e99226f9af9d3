package daemon

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHTTPJSON compares, over HTTP/1.1 JSON on loopback, Gubernator's
// GetRateLimits (one key, hits 1) with governord's own Consume (one unit on
// the tenant) from 16 and 64 connections, each call answered only once it
// is on record. It reports requests per second and the 99th percentile
// latency.
//
//	go test -run '^$' -bench HTTPJSON -benchtime 20000x ./internal/daemon
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
	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	began := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				t := time.Now()
				post(b, c, url, body, ok)
				latencies[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op")
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
