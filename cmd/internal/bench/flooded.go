package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// FloodedResult is the flooded tenants: one tenant queues thousands of
// acquires, two others a few each, on an empty pool that then opens.
type FloodedResult struct {
	Big   int `json:"big_tenant_waiters"`
	Small int `json:"small_tenant_waiters"`
	Pool  int `json:"pool"`
	// FirstGrants counts the first Pool grants per tenant: the flooder,
	// then the two others.
	FIFO [3]int `json:"fifo_first_grants"`
	Fair [3]int `json:"governor_first_grants"`
}

func (r *FloodedResult) Table() Table {
	split := func(v [3]int) string { return fmt.Sprintf("%d / %d / %d", v[0], v[1], v[2]) }
	return Table{
		Title: fmt.Sprintf("Flooded tenants: %d waiters of one tenant and %d of each of two others on a pool of %d",
			r.Big, r.Small, r.Pool),
		Columns: []string{"metric", "FIFO semaphore", "with governor"},
		Rows:    [][]string{{"first grants: flooder / second / third", split(r.FIFO), split(r.Fair)}},
		Notes:   []string{"Every waiter is queued before the pool opens; deficit round robin with equal weights alternates between tenants whatever their queue lengths."},
	}
}

func runFlooded(ctx context.Context, e *env) (_ Result, err error) {
	sz := e.Sizes
	r := &FloodedResult{Big: sz.FloodBig, Small: sz.FloodSmall, Pool: sz.FloodPool}
	f := newFIFO(0)
	opens := func(n int) func() error {
		return func() error {
			for range n {
				f.release()
			}
			return nil
		}
	}
	if r.FIFO, err = firstGrants(ctx, sz, fifoPool{f}, opens(sz.FloodPool), opens(sz.FloodBig+2*sz.FloodSmall)); err != nil {
		return nil, err
	}
	t, err := e.governord(ctx, settings{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	gp, err := newGovernedPool(ctx, t, "flooded", 0, 3)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, gp.close(context.WithoutCancel(ctx))) }()
	wctx, cancel := context.WithCancel(ctx)
	limit := int64(sz.FloodPool)
	open := func() error { return gp.s.setLimit(ctx, 1, gp.class, &limit) }
	if r.Fair, err = firstGrants(wctx, sz, gp, open, func() error { cancel(); return nil }); err != nil {
		return nil, err
	}
	return r, nil
}

// firstGrants queues the flood and the others in that order on a closed
// pool, opens it, and counts per tenant the pool's worth of grants that
// follow. Then drain lets every waiter go, and firstGrants waits for them.
func firstGrants(ctx context.Context, sz Sizes, p pool, open, drain func() error) (got [3]int, err error) {
	grants := make(chan int, sz.FloodBig+2*sz.FloodSmall)
	var once sync.Once
	var failure error
	var wg sync.WaitGroup
	defer func() {
		err = errors.Join(err, drain())
		wg.Wait()
	}()
	wait := func(tenant int) {
		defer wg.Done()
		if _, err := p.acquire(ctx, tenant); err != nil {
			if ctx.Err() == nil {
				once.Do(func() { failure = err })
			}
			return
		}
		grants <- tenant
	}
	queued := 0
	for tenant, count := range []int{sz.FloodBig, sz.FloodSmall, sz.FloodSmall} {
		for range count {
			wg.Add(1)
			go wait(tenant)
		}
		queued += count
		if err := waitFor(ctx, p, func(got int) bool { return got >= queued }); err != nil {
			return [3]int{}, err
		}
	}
	if err := open(); err != nil {
		return got, err
	}
	timeout := time.After(time.Minute)
	for range sz.FloodPool {
		select {
		case tenant := <-grants:
			got[tenant]++
		case <-timeout:
			return got, fmt.Errorf("%w: %d grants a minute after the pool of %d opened (%v)", ErrUnexpected, got[0]+got[1]+got[2], sz.FloodPool, failure)
		}
	}
	return got, nil
}
