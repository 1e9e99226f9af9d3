package metrics

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// BenchmarkScrape serves one scrape of a tree with 100 tenants, each with two
// quotas and two limits, over 10,000 tasks the collector does not read.
func BenchmarkScrape(b *testing.B) {
	r := newRig(b)
	caps := engine.Caps{Quotas: map[string]int64{"http": 1e9, "tokens": 1e9}, Limits: map[string]int64{"db": 10, "gpu": 2}}
	for i := range 100 {
		t := r.tenant(fmt.Sprint("tenant-", i), caps)
		for j := range 100 {
			r.must(&engine.Call{}, func(c *engine.Call) error {
				n, err := r.store.Engine.Create(c, t, engine.Spec{Name: fmt.Sprint("task-", j)})
				if err == nil {
					err = r.store.Engine.Consume(c, n.ID, "http", 1)
				}
				return err
			})
		}
	}
	h := r.m.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		_, _ = io.Copy(io.Discard, rec.Body)
	}
}

// BenchmarkObserveEvents counts one commit's batch of 1,024 events, as the
// writer goroutine does after each commit.
func BenchmarkObserveEvents(b *testing.B) {
	r := newRig(b)
	evs := make([]*engine.Event, 1024)
	for i := range evs {
		evs[i] = &engine.Event{Kind: engine.Kind(1 + i%14)}
	}
	b.ReportAllocs()
	for b.Loop() {
		r.m.ObserveEvents(evs)
	}
}

// BenchmarkObserveCall counts one call, as every API call does when it
// ends.
func BenchmarkObserveCall(b *testing.B) {
	r := newRig(b)
	b.ReportAllocs()
	for b.Loop() {
		r.m.ObserveCall("GetRateLimits", "ok", time.Millisecond)
	}
}
