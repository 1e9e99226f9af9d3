package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
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
			{"requests in all", n(r.Without), n(r.With)},
		},
		Notes: []string{"With governor every retry, at any layer, first spends one unit of the run's retry budget; the first attempt of a loop is free."},
	}
}

// errRefused stops a retry loop whose budget is spent.
var errRefused = errors.New("retry budget spent")

// nested runs do in layers nested loops of attempts each. Before every
// attempt but a loop's first it asks retry, which may refuse; a refusal ends
// every loop.
func nested(layers, attempts int, retry func() error, do func() error) error {
	if layers == 0 {
		return do()
	}
	var err error
	for a := range attempts {
		if a > 0 {
			if rerr := retry(); rerr != nil {
				return errors.Join(err, rerr)
			}
		}
		if err = nested(layers-1, attempts, retry, do); err == nil || errors.Is(err, errRefused) {
			return err
		}
	}
	return err
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
	storm(sz.RetryOps, func(int) { _ = nested(sz.RetryLayers, sz.RetryAttempts, func() error { return nil }, request) })
	r.Without = svc.Counts().Sent()
	svc.Reset()

	t, err := e.governord(ctx, settings{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	s, err := t.session(ctx, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.close(context.WithoutCancel(ctx))) }()
	run, err := s.node(ctx, 1, &governorv1.NodeSpec{Name: t.name("retry"), Quotas: map[string]int64{"retry": sz.RetryBudget}})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.cancel(context.WithoutCancel(ctx), run)) }()
	var mu sync.Mutex
	var failure error
	storm(sz.RetryOps, func(i int) {
		op, err := s.node(ctx, run, &governorv1.NodeSpec{Name: fmt.Sprint("op-", i)})
		if err == nil {
			err = nested(sz.RetryLayers, sz.RetryAttempts, func() error {
				switch err := s.consume(ctx, op, "retry", 1, ""); {
				case refused(err):
					return errRefused
				default:
					return err
				}
			}, request)
		}
		if err != nil && !errors.Is(err, errRefused) && !errors.Is(err, ErrDownstream) {
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
