package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"governor.dev/governor"
)

// RetryResult is the retry storm: operations that retry at three layers
// against a service that is down.
type RetryResult struct {
	Operations int   `json:"operations"`
	Layers     int   `json:"layers"`
	Attempts   int   `json:"attempts_per_layer"`
	Budget     int64 `json:"retry_budget"`
	Without    int64 `json:"requests_without"`
	With       int64 `json:"requests_with"`
}

func (r *RetryResult) Table() Table {
	per := func(v int64) string { return fmt.Sprintf("%.1f", float64(v)/float64(r.Operations)) }
	return Table{
		Title: fmt.Sprintf("Retry storm: %d operations, %d nested retry loops of %d attempts, the service down; retry budget %d",
			r.Operations, r.Layers, r.Attempts, r.Budget),
		Columns: []string{"metric", "without governor", "with governor"},
		Rows: [][]string{
			{"requests per operation", per(r.Without), per(r.With)},
			{"requests in all", num(r.Without), num(r.With)},
		},
		Notes: []string{"With governor every retry, at any layer, first spends one unit of the run's retry budget; the first attempt of a loop is free."},
	}
}

// nested runs do in layers nested loops of attempts each, with nothing to
// bound them: the retry storm without governor.
func nested(layers, attempts int, do func() error) error {
	if layers == 0 {
		return do()
	}
	var err error
	for range attempts {
		if err = nested(layers-1, attempts, do); err == nil {
			return nil
		}
	}
	return err
}

// governedNested is the same loops, each a governor.Retry: every retry at
// any layer spends one unit of the task's retry budget.
func governedNested(ctx context.Context, layers, attempts int, do func() error) error {
	if layers == 0 {
		return do()
	}
	return governor.Retry(ctx, func(ctx context.Context) error {
		return governedNested(ctx, layers-1, attempts, do)
	}, governor.Attempts(attempts), governor.Backoff(time.Millisecond, time.Millisecond))
}

func runRetry(ctx context.Context, e *env) (_ Result, err error) {
	sz := e.Sizes
	r := &RetryResult{Operations: sz.RetryOps, Layers: sz.RetryLayers, Attempts: sz.RetryAttempts, Budget: sz.RetryBudget}
	svc, err := StartDownstream(DownstreamOptions{Capacity: 0, Base: time.Millisecond})
	if err != nil {
		return nil, err
	}
	defer svc.Close()
	hc := newHTTPClient()
	request := func() error {
		served, err := call(ctx, hc, svc.URL())
		if err == nil && !served {
			err = fmt.Errorf("%w: 503", ErrDownstream)
		}
		return err
	}
	storm(sz.RetryOps, func(int) { _ = nested(sz.RetryLayers, sz.RetryAttempts, request) })
	r.Without = svc.Counts().Sent()
	svc.Reset()

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
	rctx, run, err := c.NewTask(ctx, governor.Spec{Name: t.name("retry"), Quotas: map[string]int64{governor.ResourceRetry: sz.RetryBudget}})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, run.Close()) }()
	var mu sync.Mutex
	var failure error
	storm(sz.RetryOps, func(i int) {
		octx, op, err := governor.NewTask(rctx, governor.Spec{Name: fmt.Sprint("op-", i)})
		if err == nil {
			err = governedNested(octx, sz.RetryLayers, sz.RetryAttempts, request)
			if errors.Is(err, governor.ErrRetryBudget) || errors.Is(err, ErrDownstream) {
				err = nil // how a storm against a down service ends
			}
			err = errors.Join(err, op.Close())
		}
		if err != nil {
			mu.Lock()
			failure = err
			mu.Unlock()
		}
	})
	if failure != nil {
		return nil, failure
	}
	r.With = svc.Counts().Sent()
	return r, nil
}

// storm runs op for 0..n-1 at once and waits for all.
func storm(n int, op func(int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { op(i) })
	}
	wg.Wait()
}
