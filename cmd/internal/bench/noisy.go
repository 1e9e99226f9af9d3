package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// NoisyResult is the noisy neighbour: tenant A floods a small pool just
// before tenant B asks for a little of it.
type NoisyResult struct {
	AJobs int           `json:"a_jobs"`
	BJobs int           `json:"b_jobs"`
	Slots int           `json:"slots"`
	Hold  time.Duration `json:"hold_ns"`
	FIFO  NoisyRun      `json:"fifo"`
	Fair  NoisyRun      `json:"governor"`
}

// NoisyRun is one run of the noisy neighbour.
type NoisyRun struct {
	BP95Wait time.Duration `json:"b_p95_wait_ns"`
	BFinish  time.Duration `json:"b_finish_ns"` // from B's first acquire to B's last release
	AFinish  time.Duration `json:"a_finish_ns"` // from A's first acquire to A's last release
	// AGrantsBeforeB counts A's grants after B queued and before B's last
	// grant: the share of the pool B had to wait out.
	AGrantsBeforeB int `json:"a_grants_before_b_done"`
}

func (r *NoisyResult) Table() Table {
	return Table{
		Title: fmt.Sprintf("Noisy neighbour: tenant A queues %d jobs on a %d-slot pool just before tenant B queues %d; each holds a slot %s",
			r.AJobs, r.Slots, r.BJobs, r.Hold),
		Columns: []string{"metric", "FIFO semaphore", "with governor"},
		Rows: [][]string{
			{"tenant B's p95 wait", ms(r.FIFO.BP95Wait), ms(r.Fair.BP95Wait)},
			{"tenant B's finish time", ms(r.FIFO.BFinish), ms(r.Fair.BFinish)},
			{"tenant A's finish time", ms(r.FIFO.AFinish), ms(r.Fair.AFinish)},
			{"A's grants after B queued, before B's last", num(int64(r.FIFO.AGrantsBeforeB)), num(int64(r.Fair.AGrantsBeforeB))},
		},
		Notes: []string{fmt.Sprintf("Fair share: with equal weights B waits for at most one A grant per B grant, so at most %d, plus the %d slots A held when B arrived.", r.BJobs, r.Slots)},
	}
}

func runNoisy(ctx context.Context, e *env) (_ Result, err error) {
	sz := e.Sizes
	r := &NoisyResult{AJobs: sz.NoisyA, BJobs: sz.NoisyB, Slots: sz.NoisySlots, Hold: sz.NoisyHold}
	if r.FIFO, err = noisyRun(ctx, sz, fifoPool{newFIFO(sz.NoisySlots)}); err != nil {
		return nil, err
	}
	t, err := e.governord(ctx, settings{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	gp, err := newGovernedPool(ctx, t, "noisy", sz.NoisySlots, 2)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, gp.close(context.WithoutCancel(ctx))) }()
	if r.Fair, err = noisyRun(ctx, sz, gp); err != nil {
		return nil, err
	}
	return r, nil
}

// noisyJob is what one job saw.
type noisyJob struct {
	wait  time.Duration
	order uint64
	end   time.Time
}

// noisyRun queues A's jobs, waits until all but a pool's worth are queued,
// then queues B's, and waits for every job.
func noisyRun(ctx context.Context, sz Sizes, p pool) (NoisyRun, error) {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // guards the fields below
		jobs     [2][]noisyJob
		seenA    uint64 // the latest grant A's jobs have seen
		grantedA int    // A's jobs granted and not yet done
		failure  error
	)
	job := func(tenant int) {
		defer wg.Done()
		start := time.Now()
		order, err := p.acquire(ctx, tenant)
		if err == nil {
			waited := time.Since(start)
			mu.Lock()
			if tenant == 0 {
				seenA = max(seenA, order)
				grantedA++
			}
			mu.Unlock()
			time.Sleep(sz.NoisyHold)
			err = p.release(ctx, tenant, order)
			mu.Lock()
			jobs[tenant] = append(jobs[tenant], noisyJob{wait: waited, order: order, end: time.Now()})
			if tenant == 0 {
				grantedA--
			}
			mu.Unlock()
		}
		if err != nil {
			mu.Lock()
			failure = err
			mu.Unlock()
		}
	}
	t0 := time.Now()
	for range sz.NoisyA {
		wg.Add(1)
		go job(0)
	}
	// A has queued once each of its jobs is queued or has been granted.
	if err := waitFor(ctx, p, func(queued int) bool {
		mu.Lock()
		defer mu.Unlock()
		return queued+len(jobs[0])+grantedA >= sz.NoisyA-sz.NoisySlots
	}); err != nil {
		wg.Wait()
		return NoisyRun{}, err
	}
	mu.Lock()
	markA := seenA
	mu.Unlock()
	tB := time.Now()
	for range sz.NoisyB {
		wg.Add(1)
		go job(1)
	}
	wg.Wait()
	if failure != nil {
		return NoisyRun{}, failure
	}
	return summarizeNoisy(jobs, t0, tB, markA), nil
}

// waitFor waits until done says yes to the number of acquires queued in p.
func waitFor(ctx context.Context, p pool, done func(queued int) bool) error {
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := p.queued(ctx)
		if err != nil || done(got) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %d acquires queued after a minute; the workload did not arrive", ErrUnexpected, got)
		}
		time.Sleep(time.Millisecond)
	}
}

func summarizeNoisy(jobs [2][]noisyJob, t0, tB time.Time, markA uint64) NoisyRun {
	var out NoisyRun
	var waits []time.Duration
	var lastB uint64
	for _, j := range jobs[1] {
		waits = append(waits, j.wait)
		out.BFinish = max(out.BFinish, j.end.Sub(tB))
		lastB = max(lastB, j.order)
	}
	out.BP95Wait = p95(waits)
	for _, j := range jobs[0] {
		out.AFinish = max(out.AFinish, j.end.Sub(t0))
		if j.order > markA && j.order < lastB {
			out.AGrantsBeforeB++
		}
	}
	return out
}
