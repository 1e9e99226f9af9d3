package metrics

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"governor.dev/governor/cmd/internal/engine"
)

func ptr(v int64) *int64 { return &v }

// TestScrapeShowsTheTree drives an engine and checks every metric of the
// scrape against what was done, exactly.
func TestScrapeShowsTheTree(t *testing.T) {
	r := newRig(t)
	e := r.store.Engine
	r.must(&engine.Call{}, func(c *engine.Call) error { return e.SetQuota(c, engine.RootID, "http", ptr(1000)) })
	r.must(&engine.Call{}, func(c *engine.Call) error { return e.SetLimit(c, engine.RootID, "db", ptr(3)) })
	a := r.tenant("a", engine.Caps{Quotas: map[string]int64{"http": 100}, Limits: map[string]int64{"db": 2}})
	b := r.tenant("b", engine.Caps{})
	sa, sb := r.session(a), r.session(b)
	var task engine.NodeInfo
	r.must(&engine.Call{Session: sa}, func(c *engine.Call) (err error) {
		task, err = e.Create(c, 0, engine.Spec{Name: "task-1"})
		return err
	})
	r.must(&engine.Call{Session: sa}, func(c *engine.Call) error { return e.Consume(c, task.ID, "http", 7) })
	r.must(&engine.Call{Session: sb}, func(c *engine.Call) error { return e.Consume(c, 0, "http", 5) })
	for range 2 {
		r.must(&engine.Call{Session: sa}, func(c *engine.Call) error {
			_, _, err := e.Acquire(c, task.ID, "db", 0)
			return err
		})
	}
	r.must(&engine.Call{Session: sb}, func(c *engine.Call) error {
		_, _, err := e.Acquire(c, 0, "db", 0)
		return err
	})
	var queued *engine.Waiter
	r.must(&engine.Call{Session: sa}, func(c *engine.Call) (err error) {
		_, queued, err = e.Acquire(c, task.ID, "db", 0)
		return err
	})
	if queued == nil {
		t.Fatal("the fourth acquire was granted over a limit of 3")
	}
	r.m.ObserveCall("Consume", "OK", 2*time.Millisecond)
	r.m.ObserveCall("Consume", "OK", 2*time.Millisecond)
	r.m.ObserveCall("Consume", "ResourceExhausted", time.Millisecond)
	r.m.ObserveEvents([]*engine.Event{{Kind: engine.Kind(200)}})

	fams := r.await(3, "governor_events_total", "kind=lease_granted")
	for _, tt := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"governor_root_quota_used_total", []string{"resource=http"}, 12},
		{"governor_root_quota_limit", []string{"resource=http"}, 1000},
		{"governor_root_leases_held", []string{"class=db"}, 3},
		{"governor_root_lease_limit", []string{"class=db"}, 3},
		{"governor_waiting_acquires", []string{"class=db"}, 1},
		{"governor_tenant_quota_used_total", []string{"resource=http", "tenant=a"}, 7},
		{"governor_tenant_quota_used_total", []string{"resource=http", "tenant=b"}, 5},
		{"governor_tenant_quota_limit", []string{"resource=http", "tenant=a"}, 100},
		{"governor_tenant_leases_held", []string{"class=db", "tenant=a"}, 2},
		{"governor_tenant_leases_held", []string{"class=db", "tenant=b"}, 1},
		{"governor_tenant_lease_limit", []string{"class=db", "tenant=a"}, 2},
		{"governor_nodes", nil, 4},
		{"governor_sessions", nil, 2},
		{"governor_events_total", []string{"kind=consumed"}, 2},
		{"governor_events_total", []string{"kind=node_created"}, 3},
		{"governor_events_total", []string{"kind=session_opened"}, 2},
		{"governor_events_total", []string{"kind=limit_set"}, 1},
		{"governor_events_total", []string{"kind=lease_released"}, 0},
		{"governor_events_total", []string{"kind=kind(200)"}, 1},
		{"governor_grpc_requests_total", []string{"code=OK", "method=Consume"}, 2},
		{"governor_grpc_requests_total", []string{"code=ResourceExhausted", "method=Consume"}, 1},
		{"governor_grpc_request_duration_seconds", []string{"method=Consume"}, 3},
	} {
		if got, ok := value(fams, tt.name, tt.labels...); !ok || got != tt.want {
			t.Errorf("%s%v = %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	for _, absent := range []struct {
		name   string
		labels []string
	}{
		{"governor_tenant_quota_limit", []string{"resource=http", "tenant=b"}},
		{"governor_tenant_lease_limit", []string{"class=db", "tenant=b"}},
	} {
		if v, ok := value(fams, absent.name, absent.labels...); ok {
			t.Errorf("%s%v = %v for an uncapped tenant; want no series", absent.name, absent.labels, v)
		}
	}
	if sum := fams["governor_grpc_request_duration_seconds"].GetMetric()[0].GetHistogram().GetSampleSum(); sum != 0.005 {
		t.Errorf("call durations sum to %v s, want 0.005", sum)
	}
	if h := fams["governor_grpc_request_duration_seconds"].GetMetric()[0].GetHistogram(); h.GetBucket()[0].GetCumulativeCount() != 0 {
		t.Errorf("a call of 1ms fell in the first bucket (%v s)", h.GetBucket()[0].GetUpperBound())
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("%s is not served", name)
		}
	}
}

// TestObserveCommit: each commit is one sample of both histograms, its
// events and its duration.
func TestObserveCommit(t *testing.T) {
	r := newRig(t)
	m := New(r.store)
	m.ObserveCommit(5, 3*time.Millisecond)
	m.ObserveCommit(1, time.Millisecond)
	r.m = m
	fams := r.scrape()
	batch := fams["governor_commit_batch_events"].GetMetric()[0].GetHistogram()
	took := fams["governor_commit_duration_seconds"].GetMetric()[0].GetHistogram()
	if batch.GetSampleCount() != 2 || batch.GetSampleSum() != 6 || took.GetSampleCount() != 2 || took.GetSampleSum() != 0.004 {
		t.Fatalf("two commits of 5 and 1 events in 3ms and 1ms: batches %d summing to %v, durations %d summing to %v",
			batch.GetSampleCount(), batch.GetSampleSum(), took.GetSampleCount(), took.GetSampleSum())
	}
}

// TestCommitsAddUp: wired to a store, the batch sizes of every commit add up
// to the events on record, and each commit is timed.
func TestCommitsAddUp(t *testing.T) {
	r := newRig(t)
	for i := range 20 {
		r.tenant(string(rune('a'+i)), engine.Caps{})
	}
	seq := float64(r.store.Engine.Seq())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		fams := r.scrape()
		batch := fams["governor_commit_batch_events"].GetMetric()[0].GetHistogram()
		took := fams["governor_commit_duration_seconds"].GetMetric()[0].GetHistogram()
		if batch.GetSampleSum() == seq && took.GetSampleCount() == batch.GetSampleCount() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("commits wrote %v events in %d commits (%d timed); %v are on record",
				batch.GetSampleSum(), batch.GetSampleCount(), took.GetSampleCount(), seq)
		}
	}
}

// TestNoTimeShortcuts: the collector keeps nothing between scrapes. Two
// scrapes of an unchanged tree agree, and a change shows in the very next
// scrape.
func TestNoTimeShortcuts(t *testing.T) {
	r := newRig(t)
	a := r.tenant("a", engine.Caps{Quotas: map[string]int64{"http": 100}})
	r.must(&engine.Call{}, func(c *engine.Call) error { return r.store.Engine.Consume(c, a, "http", 1) })
	r.await(1, "governor_events_total", "kind=consumed")
	first, second := governorText(r.scrapeText()), governorText(r.scrapeText())
	if first != second {
		t.Fatalf("two scrapes of an unchanged tree differ:\n%s\n---\n%s", first, second)
	}
	for want := 2.0; want <= 4; want++ {
		r.must(&engine.Call{}, func(c *engine.Call) error { return r.store.Engine.Consume(c, a, "http", 1) })
		fams := r.scrape()
		if got, _ := value(fams, "governor_tenant_quota_used_total", "resource=http", "tenant=a"); got != want {
			t.Fatalf("the scrape right after consume %v shows %v used", want, got)
		}
	}
}

// TestTenantMadeAgain: a tenant ended and made again under the same name
// (the old one kept for retention) is one series, the newest node's.
func TestTenantMadeAgain(t *testing.T) {
	r := newRig(t)
	e := r.store.Engine
	old := r.tenant("a", engine.Caps{})
	r.must(&engine.Call{}, func(c *engine.Call) error { return e.Consume(c, old, "http", 9) })
	r.must(&engine.Call{}, func(c *engine.Call) error { return e.Cancel(c, old) })
	again := r.tenant("a", engine.Caps{})
	r.must(&engine.Call{}, func(c *engine.Call) error { return e.Consume(c, again, "http", 2) })
	fams := r.scrape()
	if got, _ := value(fams, "governor_tenant_quota_used_total", "resource=http", "tenant=a"); got != 2 {
		t.Fatalf("tenant a made again shows %v used, want the new node's 2", got)
	}
	if got, _ := value(fams, "governor_root_quota_used_total", "resource=http"); got != 11 {
		t.Fatalf("root used %v, want 11", got)
	}
}

// failing is a tree that cannot be read.
type failing struct{}

func (failing) Describe(*engine.Call, engine.ID, *engine.Page) (engine.NodeInfo, []engine.NodeInfo, engine.ID, error) {
	return engine.NodeInfo{}, nil, 0, engine.ErrCorrupt
}
func (failing) Stats() engine.Stats { return engine.Stats{} }

func (failing) Bounds() []engine.TenantBounds { return nil }

// TestUnreadableTreeIsAnError: a tree that cannot be read makes the scrape
// fail rather than report zeros.
func TestUnreadableTreeIsAnError(t *testing.T) {
	ch := make(chan prometheus.Metric, 16)
	newTreeCollector(failing{}).Collect(ch)
	close(ch)
	var errs int
	for m := range ch {
		var out dto.Metric
		if err := m.Write(&out); errors.Is(err, engine.ErrCorrupt) {
			errs++
		}
	}
	if errs != 1 {
		t.Fatalf("%d errors collected from an unreadable tree, want 1", errs)
	}
}
