package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// OverheadResult is what a call costs over loopback, per record.
type OverheadResult struct {
	Calls   int             `json:"calls"`
	Callers int             `json:"callers"`
	Records []OverheadTimes `json:"records"`
}

// OverheadTimes are one record's measurements.
type OverheadTimes struct {
	Record     string        `json:"record"`
	Skipped    string        `json:"skipped,omitempty"`
	Consume    time.Duration `json:"consume_ns"`         // one caller, mean per call
	AcquireRel time.Duration `json:"acquire_release_ns"` // one caller, mean per pair
	Throughput float64       `json:"consumes_per_second"`
}

func (r *OverheadResult) Table() Table {
	t := Table{
		Title:   "Overhead over loopback (Connect over HTTP/2), governord in this process",
		Columns: []string{"record", "consume, one caller", "acquire and release, one caller", fmt.Sprintf("consume, %d callers", r.Callers)},
		Notes:   []string{fmt.Sprintf("Means over %d calls one after another; throughput over the run's length. Every change is committed before its reply.", r.Calls)},
	}
	for _, rec := range r.Records {
		if rec.Skipped != "" {
			t.Rows = append(t.Rows, []string{rec.Record, "skipped: " + rec.Skipped, "", ""})
			continue
		}
		t.Rows = append(t.Rows, []string{rec.Record, us(rec.Consume), us(rec.AcquireRel), fmt.Sprintf("%s per second", num(int64(rec.Throughput)))})
	}
	return t
}

func runOverhead(ctx context.Context, e *env) (Result, error) {
	if e.Remote != nil {
		return nil, fmt.Errorf("%w: it compares records", ErrNeedsOwnGovernord)
	}
	r := &OverheadResult{Calls: e.Sizes.OverheadCalls, Callers: e.Sizes.OverheadCallers}
	records := []struct{ name, url string }{
		{"memory", ""},
		{"SQLite", "sqlite:" + filepath.Join(e.Dir, "overhead-"+randomHex(4)+".db")},
		{"PostgreSQL", e.PostgresURL},
	}
	for _, rec := range records {
		if rec.name == "PostgreSQL" && rec.url == "" {
			r.Records = append(r.Records, OverheadTimes{Record: rec.name, Skipped: "no PostgreSQL URL given (-database-url)"})
			continue
		}
		times, err := overheadOn(ctx, e.Sizes, rec.url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rec.name, err)
		}
		times.Record = rec.name
		r.Records = append(r.Records, times)
	}
	return r, nil
}

// overheadOn measures one record with a governord of its own.
func overheadOn(ctx context.Context, sz Sizes, dbURL string) (_ OverheadTimes, err error) {
	var out OverheadTimes
	t, err := startInProcess(ctx, settings{databaseURL: dbURL})
	if err != nil {
		return out, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	s, err := t.session(ctx, sessionTTL)
	if err != nil {
		return out, err
	}
	node, err := s.node(ctx, 1, &governorv1.NodeSpec{Name: t.name("overhead"), Quotas: map[string]int64{"ops": 1 << 40}})
	if err != nil {
		return out, err
	}
	start := time.Now()
	for range sz.OverheadCalls {
		if err := s.consume(ctx, node, "ops", 1, ""); err != nil {
			return out, err
		}
	}
	out.Consume = time.Since(start) / time.Duration(sz.OverheadCalls)
	start = time.Now()
	for range sz.OverheadCalls {
		lease, err := s.acquire(ctx, node, "slots")
		if err != nil {
			return out, err
		}
		if err := s.release(ctx, lease, 0, false); err != nil {
			return out, err
		}
	}
	out.AcquireRel = time.Since(start) / time.Duration(sz.OverheadCalls)
	out.Throughput, err = throughput(ctx, s, node, sz.OverheadCallers, sz.OverheadFor)
	return out, err
}

// throughput runs callers consuming one after another for d and returns
// the consumes answered per second.
func throughput(ctx context.Context, s *session, node uint64, callers int, d time.Duration) (float64, error) {
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, callers)
	start := time.Now()
	end := start.Add(d)
	for i := range callers {
		wg.Go(func() {
			for time.Now().Before(end) {
				if errs[i] = s.consume(ctx, node, "ops", 1, ""); errs[i] != nil {
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / time.Since(start).Seconds(), errors.Join(errs...)
}
