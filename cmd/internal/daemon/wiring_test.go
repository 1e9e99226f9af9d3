package daemon

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// scrape reads the metrics endpoint into series name (with labels) to value.
func scrape(t *testing.T, d *Daemon) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + d.MetricsAddr().String() + "/metrics")
	must(t, err)
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// parseMetrics reads metrics in the text format into series name (with
// labels) to value.
func parseMetrics(r io.Reader) map[string]float64 {
	series := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); i > 0 && err == nil {
			series[line[:i]] = v
		}
	}
	return series
}

func TestCommittedEventsReachMetricsAndTheAPI(t *testing.T) {
	cfg := testConfig("")
	cfg.MetricsListen = "localhost:0"
	d := startDaemon(t, cfg, Options{})
	ctx := context.Background()
	api := newJSONAPI(d.URL())
	token, err := api.session(ctx, testTeamKey)
	must(t, err)

	// A watch stream on the tenant's subtree sees a child created after it
	// opened: the API is fed committed events.
	client := governorv1connect.NewGovernorServiceClient(http.DefaultClient, d.URL())
	req := connect.NewRequest(&governorv1.WatchNodeRequest{Subtree: true})
	req.Header().Set("Authorization", "Bearer "+token)
	watchCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := client.WatchNode(watchCtx, req)
	must(t, err)
	defer stream.Close()
	if !stream.Receive() {
		t.Fatalf("the watch stream ended before its first message: %v", stream.Err())
	}
	_, err = api.ensure(ctx, testTeamKey, "child")
	must(t, err)
	for stream.Msg().GetName() != "child" {
		if !stream.Receive() {
			t.Fatalf("the watch stream never reported the new child: %v", stream.Err())
		}
	}

	// The hook runs just after the commit that woke the caller, so the
	// counts may trail the answer by a moment.
	must(t, api.consume(ctx, testTeamKey, 0, "http", 1))
	want := []string{
		`governor_events_total{kind="consumed"}`,
		`governor_commit_batch_events_count`,
		`governor_grpc_requests_total{code="ok",method="Consume"}`,
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, name := range want {
		for m := scrape(t, d); m[name] < 1; m = scrape(t, d) {
			if time.Now().After(deadline) {
				t.Fatalf("%s = %v, want at least 1", name, m[name])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestAdaptiveControllerLearnsFromReleasesAndItsLimitSurvivesRestart(t *testing.T) {
	url := "sqlite:" + t.TempDir() + "/governor.db"
	cfg := testConfig(url)
	cfg.Root.Limits = map[string]int64{"db": 50} // the controller's class: left to it
	cfg.Adaptive = map[string]config.Adaptive{"db": {
		Initial: 3, Min: 1, Max: 10, MaxOverloadShare: 0.5, Interval: 20 * time.Millisecond, MinSamples: 1,
	}}
	rootDB := func(d *Daemon) int64 { return describe(t, d.store, engine.RootID).Limits["db"].Limit }
	d := startDaemon(t, cfg, Options{})
	if got := rootDB(d); got != 3 {
		t.Fatalf("root db limit %d at start, want the controller's initial 3", got)
	}
	ctx := context.Background()
	api := newJSONAPI(d.URL())
	token, err := api.session(ctx, testTeamKey)
	must(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for rootDB(d) <= 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the root's db limit is still %d: the controller saw no release", rootDB(d))
		}
		var got struct {
			Lease struct {
				ID string `json:"id"`
			} `json:"lease"`
		}
		must(t, api.call(ctx, token, "Acquire", map[string]any{"class": "db"}, &got))
		must(t, api.call(ctx, token, "Release", map[string]any{"lease_id": got.Lease.ID, "latency": "0.001s"}, nil))
		time.Sleep(30 * time.Millisecond)
	}
	must(t, d.Stop(ctx))
	st := openRecord(t, url)
	learned := describe(t, st, engine.RootID).Limits["db"].Limit
	must(t, st.Close(ctx))

	again := startDaemon(t, cfg, Options{})
	if got := rootDB(again); got != learned || got <= 3 {
		t.Fatalf("after a restart the root's db limit is %d, want the learned %d", got, learned)
	}
}
