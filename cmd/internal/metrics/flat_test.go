package metrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// task is the life of one task: made, charged, a lease taken and given back,
// closed. Each call is counted as the server counts it.
func (r *rig) task(sess engine.ID, name string) error {
	e := r.store.Engine
	var n engine.NodeInfo
	steps := []struct {
		method string
		op     func(c *engine.Call) error
	}{
		{"CreateNode", func(c *engine.Call) (err error) { n, err = e.Create(c, 0, engine.Spec{Name: name}); return err }},
		{"Consume", func(c *engine.Call) error { return e.Consume(c, n.ID, "http", 1) }},
		{"Acquire", func(c *engine.Call) error {
			info, w, err := e.Acquire(c, n.ID, "db", 0)
			if w != nil {
				g := <-w.C()
				info, err, c.Seq = g.Lease, g.Err, g.Seq
			}
			if err == nil {
				_, err = e.Release(&engine.Call{Session: sess}, info.ID, engine.Report{LatencyNanos: 1000})
			}
			return err
		}},
		{"CloseNode", func(c *engine.Call) error { return e.Close(c, n.ID) }},
	}
	for _, s := range steps {
		if err := r.do(&engine.Call{Session: sess}, s.op); err != nil {
			return fmt.Errorf("%s %s: %w", s.method, name, err)
		}
		r.m.ObserveCall(s.method, "OK", 0)
	}
	return nil
}

// TestSeriesStayFlat makes, uses and ends 10,000 tasks under two tenants: the
// number of series is the same before and after, and no label names a task.
func TestSeriesStayFlat(t *testing.T) {
	r := newRig(t)
	caps := engine.Caps{Quotas: map[string]int64{"http": 1 << 40}, Limits: map[string]int64{"db": 3}}
	tenants := []engine.ID{r.tenant("a", caps), r.tenant("b", caps)}
	const workers, tasks = 8, 10_000
	sessions := make([]engine.ID, workers)
	for i := range sessions {
		sessions[i] = r.session(tenants[i%2])
		if err := r.task(sessions[i], fmt.Sprint("warm-", i)); err != nil {
			t.Fatal(err)
		}
	}
	r.await(workers, "governor_events_total", "kind=lease_released")
	before := r.scrape()
	n := series(t, before)
	var wg sync.WaitGroup
	finished, scraped := make(chan struct{}), make(chan int)
	go func() { // scrapes run alongside the work, as Prometheus's would
		for n := 0; ; n++ {
			select {
			case <-finished:
				scraped <- n
				return
			default:
			}
			rec := httptest.NewRecorder()
			r.m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if rec.Code != http.StatusOK {
				t.Errorf("scrape during the work: %d %s", rec.Code, rec.Body)
			}
		}
	}()
	for w := range workers {
		wg.Go(func() {
			for i := w; i < tasks; i += workers {
				if err := r.task(sessions[w], fmt.Sprint("task-", i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(finished)
	scrapes := <-scraped
	after := r.await(workers+tasks, "governor_events_total", "kind=lease_released")
	if m := series(t, after); m != n {
		t.Fatalf("%d governor_ series before %d tasks and %d after: the series grew with the work", n, tasks, m)
	}
	nodes, _ := value(after, "governor_nodes")
	used, _ := value(after, "governor_root_quota_used_total", "resource=http")
	t.Logf("%d series before and after %d tasks (%d scrapes during them); %v nodes kept for retention, %v units used",
		n, tasks, scrapes, nodes, used)
	if used != workers+tasks {
		t.Fatalf("root used %v, want %d", used, workers+tasks)
	}
}
