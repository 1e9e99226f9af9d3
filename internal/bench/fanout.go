package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// FanoutResult is the runaway fan-out: the same task tree without and with
// governord.
type FanoutResult struct {
	Tasks    int    `json:"tasks"`
	Wanted   int64  `json:"requests_wanted"`
	Budget   int64  `json:"budget"`
	Capacity int64  `json:"capacity"`
	Without  Counts `json:"without"`
	With     Counts `json:"with"`
	Refused  int64  `json:"refused_by_budget"`
}

func (r *FanoutResult) Table() Table {
	return Table{
		Title: fmt.Sprintf("Runaway fan-out: %d tasks want %d requests from a service that takes %d at once; budget %d",
			r.Tasks, r.Wanted, r.Capacity, r.Budget),
		Columns: []string{"metric", "without governor", "with governor"},
		Rows: [][]string{
			{"requests sent", n(r.Without.Sent()), n(r.With.Sent())},
			{"requests shed by the service", n(r.Without.Shed), n(r.With.Shed)},
			{"peak concurrency at the service", n(r.Without.Peak), n(r.With.Peak)},
			{"requests refused by the budget", "0", n(r.Refused)},
		},
		Notes: []string{"With governor each request spends one unit of the run's http budget and holds one of its http leases (the pool is the service's capacity)."},
	}
}

// treeSize is the number of tasks in a tree of the given width and depth
// below its first task.
func treeSize(width, depth int) int {
	total, level := 0, 1
	for range depth + 1 {
		total += level
		level *= width
	}
	return total
}

func runFanout(ctx context.Context, e *env) (Result, error) {
	sz := e.Sizes
	r := &FanoutResult{Tasks: treeSize(sz.FanWidth, sz.FanDepth), Budget: sz.FanBudget, Capacity: sz.FanCapacity}
	r.Wanted = int64(r.Tasks * sz.FanRequests)
	svc, err := StartDownstream(DownstreamOptions{Capacity: sz.FanCapacity, Base: 10 * time.Millisecond, ShedCost: 5 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer svc.Close()
	hc := newHTTPClient()
	// Without governor: every task makes its requests, whatever the service
	// says.
	spawn(sz.FanWidth, sz.FanDepth, 0, func(int, uint64) uint64 { return 0 }, func(uint64) {
		for range sz.FanRequests {
			_, _ = call(ctx, hc, svc.URL())
		}
	})
	r.Without = svc.Counts()
	svc.Reset()

	t, err := e.governord(ctx, settings{})
	if err != nil {
		return nil, err
	}
	defer t.close()
	s, err := t.session(ctx, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer s.close(context.WithoutCancel(ctx))
	run, err := s.node(ctx, 1, &governorv1.NodeSpec{Name: t.name("fanout"),
		Quotas: map[string]int64{"http": sz.FanBudget}, Limits: map[string]int64{"http": sz.FanCapacity}})
	if err != nil {
		return nil, err
	}
	defer s.cancel(context.WithoutCancel(ctx), run)
	var refusedN atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	spawn(sz.FanWidth, sz.FanDepth, run, func(i int, parent uint64) uint64 {
		id, err := s.node(ctx, parent, &governorv1.NodeSpec{Name: fmt.Sprintf("task-%d", i)})
		if err != nil {
			fail(err)
		}
		return id
	}, func(task uint64) {
		if task == 0 { // its node was not made: the error is already kept
			return
		}
		for range sz.FanRequests {
			switch err := governedCall(ctx, s, task, hc, svc.URL()); {
			case refused(err):
				refusedN.Add(1)
			case err != nil:
				fail(err)
			}
		}
	})
	if firstErr != nil {
		return nil, firstErr
	}
	r.With, r.Refused = svc.Counts(), refusedN.Load()
	return r, nil
}

// spawn runs a task tree: the first task under root, each task making width
// children (made with child, which gets the child's index and the parent)
// down to depth levels, every task doing work once its children have
// started. It returns when every task is done.
func spawn(width, depth int, root uint64, child func(int, uint64) uint64, work func(uint64)) {
	var wg sync.WaitGroup
	var next atomic.Int64
	var task func(id uint64, level int)
	task = func(id uint64, level int) {
		defer wg.Done()
		if level < depth {
			for range width {
				kid := child(int(next.Add(1)), id)
				wg.Add(1)
				go task(kid, level+1)
			}
		}
		work(id)
	}
	wg.Add(1)
	go task(child(0, root), 0)
	wg.Wait()
}

// governedCall is one request as a governed client makes it: one unit of
// the http budget, then the request under an http lease.
func governedCall(ctx context.Context, s *session, node uint64, hc *http.Client, url string) error {
	if err := s.consume(ctx, node, "http", 1, ""); err != nil {
		return err
	}
	return governedRequest(ctx, s, node, "http", hc, url)
}

// governedRequest is one request under a lease of class, released with the
// latency and whether the service shed it.
func governedRequest(ctx context.Context, s *session, node uint64, class string, hc *http.Client, url string) error {
	lease, err := s.acquire(ctx, node, class)
	if err != nil {
		return err
	}
	start := time.Now()
	served, err := call(ctx, hc, url)
	if rerr := s.release(context.WithoutCancel(ctx), lease, time.Since(start), !served); err == nil {
		err = rerr
	}
	return err
}
