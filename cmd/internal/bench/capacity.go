package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"governor.dev/governor/cmd/internal/config"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// dropClass is the shared pool of the capacity drop, a root limit.
const dropClass = "http"

// dropBase is the service's latency for a request served alone.
const dropBase = 10 * time.Millisecond

// CapacityResult is the capacity drop: the service loses most of its
// capacity a third of the way in; a fixed limit and an adaptive one. Each
// third lasts at least For/3 and until the service has served PerThird
// requests in it.
type CapacityResult struct {
	Workers  int           `json:"workers"`
	For      time.Duration `json:"for_ns"`
	PerThird int64         `json:"served_per_third"`
	From     int64         `json:"capacity_from"`
	To       int64         `json:"capacity_to"`
	Fixed    Counts        `json:"fixed_last_third"`
	Adaptive Counts        `json:"adaptive_last_third"`
	// LimitAtEnd is the adaptive limit when the run ended.
	LimitAtEnd int64 `json:"adaptive_limit_at_end"`
}

func (r *CapacityResult) Table() Table {
	return Table{
		Title: fmt.Sprintf("Capacity drop: %d workers for at least %s; the service's capacity falls from %d to %d at one third",
			r.Workers, r.For, r.From, r.To),
		Columns: []string{"in the last third", "fixed limit", "adaptive limit"},
		Rows: [][]string{
			{"requests shed", num(r.Fixed.Shed), num(r.Adaptive.Shed)},
			{"requests served", num(r.Fixed.Served), num(r.Adaptive.Served)},
			{"limit at the end", num(r.From), num(r.LimitAtEnd)},
		},
		Notes: []string{fmt.Sprintf("Each third lasts at least %s and until the service has served %d requests in it.", r.For/3, r.PerThird),
			fmt.Sprintf("Each worker holds one %s lease per request and reports its latency and whether it was shed; the adaptive controller cuts to 70%% above a p95 of %s or 10%% shed, else adds one, every %s.",
				dropClass, dropTarget, dropInterval)},
	}
}

// The adaptive controller of the capacity drop.
const (
	dropTarget   = 3 * dropBase
	dropInterval = 100 * time.Millisecond
)

func runCapacity(ctx context.Context, e *env) (Result, error) {
	sz := e.Sizes
	r := &CapacityResult{Workers: sz.DropWorkers, For: sz.DropFor, PerThird: sz.DropServed, From: sz.DropFrom, To: sz.DropTo}
	fixed := settings{rootLimits: map[string]int64{dropClass: sz.DropFrom}}
	adaptive := settings{adaptive: map[string]config.Adaptive{dropClass: {
		Initial: sz.DropFrom, Min: 1, Max: 2 * sz.DropFrom, TargetP95: dropTarget,
		MaxOverloadShare: 0.1, Interval: dropInterval, MinSamples: 5,
	}}}
	// Both at once, so that both meet the same machine: how many requests a
	// worker gets to the service, and so how many are shed, depends on how
	// much CPU it has, which another job can take from one run and not the
	// other.
	var wg sync.WaitGroup
	var fixedErr, adaptiveErr error
	wg.Go(func() { r.Fixed, _, fixedErr = dropRun(ctx, e, sz, fixed) })
	wg.Go(func() { r.Adaptive, r.LimitAtEnd, adaptiveErr = dropRun(ctx, e, sz, adaptive) })
	wg.Wait()
	if fixedErr != nil {
		fixedErr = fmt.Errorf("fixed limit: %w", fixedErr)
	}
	if adaptiveErr != nil {
		adaptiveErr = fmt.Errorf("adaptive limit: %w", adaptiveErr)
	}
	if err := errors.Join(fixedErr, adaptiveErr); err != nil {
		return nil, err
	}
	return r, nil
}

// dropRun runs the workers against a new service and a governord started as
// s says, and returns what the service saw in the last third and the pool's
// limit at the end.
//
// A third ends by what the service did as well as by the clock (see
// dropThird): on a machine too busy to keep the workers at the service, a
// third of DropFor alone would hold fewer requests, fewer of them shed and
// fewer reports for the controller, by an amount that varies from one run
// to the next, and the two runs would no longer be compared on like terms.
func dropRun(ctx context.Context, e *env, sz Sizes, s settings) (_ Counts, limit int64, err error) {
	svc, err := StartDownstream(DownstreamOptions{Capacity: sz.DropFrom, Base: dropBase, ShedCost: time.Millisecond})
	if err != nil {
		return Counts{}, 0, err
	}
	defer svc.Close()
	t, err := e.governord(ctx, s)
	if err != nil {
		return Counts{}, 0, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	sess, err := t.session(ctx, sessionTTL)
	if err != nil {
		return Counts{}, 0, err
	}
	node, err := sess.node(ctx, 1, &governorv1.NodeSpec{Name: t.name("capacity")})
	if err != nil {
		return Counts{}, 0, err
	}
	hc := newHTTPClient()
	// Cancelled, not given a deadline: a deadline would travel with each
	// call and could end one on governord's side before this side notices.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failure error
	for range sz.DropWorkers {
		wg.Go(func() {
			for runCtx.Err() == nil {
				err := governedRequest(runCtx, sess, node, dropClass, hc, svc.URL())
				if err != nil && runCtx.Err() == nil {
					mu.Lock()
					failure = err
					mu.Unlock()
					stop()
					return
				}
			}
		})
	}
	dropThird(runCtx, svc, sz)
	svc.SetCapacity(sz.DropTo)
	dropThird(runCtx, svc, sz)
	last := dropThird(runCtx, svc, sz)
	stop()
	wg.Wait()
	if failure != nil {
		return Counts{}, 0, failure
	}
	if ctx.Err() != nil {
		return Counts{}, 0, fmt.Errorf("the capacity drop did not finish: %w", ctx.Err())
	}
	root, err := sess.describe(ctx, 1)
	if err != nil {
		return Counts{}, 0, err
	}
	return last, root.Classes[dropClass].GetLimit(), errors.Join(sess.cancel(ctx, node), sess.close(ctx))
}

// dropThird is one third of a capacity drop, counted afresh: it lasts
// DropFor/3 and until the service has served DropServed requests in it, or
// until ctx ends. It returns what the service saw in it.
func dropThird(ctx context.Context, svc *Downstream, sz Sizes) Counts {
	svc.Reset()
	served := svc.ServedAtLeast(sz.DropServed)
	sleep(ctx, sz.DropFor/3)
	select {
	case <-served:
	case <-ctx.Done():
	}
	return svc.Counts()
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
