package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"governor.dev/governor"
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
			{"requests sent", num(r.Without.Sent()), num(r.With.Sent())},
			{"requests shed by the service", num(r.Without.Shed), num(r.With.Shed)},
			{"peak concurrency at the service", num(r.Without.Peak), num(r.With.Peak)},
			{"requests refused by the budget", "0", num(r.Refused)},
		},
		Notes: []string{"With governor each request goes through the SDK's Transport: one unit of the run's http budget, and one of its http leases (the pool is the service's capacity) until the response is read."},
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

func runFanout(ctx context.Context, e *env) (_ Result, err error) {
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
	none := func(struct{}, int) (struct{}, func() error, error) {
		return struct{}{}, func() error { return nil }, nil
	}
	if err := spawn(sz.FanWidth, sz.FanDepth, struct{}{}, none, func(struct{}) error {
		for range sz.FanRequests {
			if _, err := call(ctx, hc, svc.URL()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	r.Without = svc.Counts()
	svc.Reset()

	// With governor: the same tree as tasks of a run with a budget and a
	// pool, each request through the SDK's Transport.
	t, err := e.governord(ctx, settings{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, c.Close()) }()
	rctx, run, err := c.NewTask(ctx, governor.Spec{Name: t.name("fanout"),
		Quotas: map[string]int64{governor.ResourceHTTP: sz.FanBudget}, Limits: map[string]int64{governor.ClassHTTP: sz.FanCapacity}})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, run.Close()) }()
	ghc := &http.Client{Transport: governor.Transport(hc.Transport)}
	var refusedN atomic.Int64
	subtask := func(parent context.Context, i int) (context.Context, func() error, error) {
		ctx, task, err := governor.NewTask(parent, governor.Spec{Name: fmt.Sprint("task-", i)})
		if err != nil {
			return nil, nil, err
		}
		return ctx, task.Close, nil
	}
	if err := spawn(sz.FanWidth, sz.FanDepth, rctx, subtask, func(ctx context.Context) error {
		for range sz.FanRequests {
			_, err := call(ctx, ghc, svc.URL())
			switch {
			case errors.Is(err, governor.ErrDenied):
				refusedN.Add(1)
			case err != nil:
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	r.With, r.Refused = svc.Counts(), refusedN.Load()
	return r, nil
}

// spawn runs a task tree: the first task under root, each task starting
// width children down to depth levels below the first. start makes a task
// under its parent and returns it with the function that ends it; work is
// what each task does while its children run. A task ends once its work and
// its children are done. spawn returns the first error once every task has
// ended.
func spawn[T any](width, depth int, root T, start func(parent T, i int) (T, func() error, error), work func(T) error) error {
	var mu sync.Mutex
	var first error
	keep := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	var next atomic.Int64
	var task func(parent T, level, i int)
	task = func(parent T, level, i int) {
		self, end, err := start(parent, i)
		if err != nil {
			keep(err)
			return
		}
		var kids sync.WaitGroup
		if level < depth {
			for range width {
				kids.Go(func() { task(self, level+1, int(next.Add(1))) })
			}
		}
		if err := work(self); err != nil {
			keep(err)
		}
		kids.Wait()
		if err := end(); err != nil {
			keep(err)
		}
	}
	task(root, 0, 0)
	return first
}
