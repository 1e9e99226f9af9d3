package adaptive

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// downstream is a fake service with a capacity. Up to its capacity a call
// takes base; beyond it, latency grows with the calls in flight, and past
// twice its capacity it says it is overloaded. The reported latency is
// computed, not measured, so the test does not depend on the machine's speed.
type downstream struct {
	base     time.Duration
	capacity atomic.Int64
	inflight atomic.Int64
}

func (d *downstream) call() engine.Report {
	n := d.inflight.Add(1)
	defer d.inflight.Add(-1)
	time.Sleep(time.Millisecond) // hold the slot, so the others in flight are counted
	c := d.capacity.Load()
	lat := d.base
	if n > c {
		lat = d.base * time.Duration(n) / time.Duration(c)
	}
	return engine.Report{LatencyNanos: int64(lat), Overloaded: n > 2*c}
}

// simWorker acquires a db lease, calls the downstream and releases the lease
// with the downstream's report, until stop is set. Errors go to t.Error: it
// runs off the test goroutine.
func (r *rig) simWorker(t *testing.T, i int, tenant engine.ID, d *downstream, stop *atomic.Bool) {
	ctx, e := context.Background(), r.store.Engine
	tok := sha256.Sum256(fmt.Append(nil, "sim-worker-", i))
	c := &engine.Call{}
	s, err := e.OpenSession(c, tenant, 0, tok)
	if err != nil {
		t.Errorf("worker %d: open session: %v", i, err)
		return
	}
	for !stop.Load() {
		if err := r.store.Room(ctx); err != nil {
			t.Errorf("worker %d: %v", i, err)
			return
		}
		c := &engine.Call{Session: s.ID}
		info, w, err := e.Acquire(c, 0, "db", 0)
		if w != nil {
			g := <-w.C()
			info, err, c.Seq = g.Lease, g.Err, g.Seq
		}
		if err == nil {
			err = r.store.Wait(ctx, c.Seq)
		}
		if err != nil {
			t.Errorf("worker %d: acquire: %v", i, err)
			return
		}
		rep := d.call()
		c = &engine.Call{Session: s.ID}
		if _, err := e.Release(c, info.ID, rep); err != nil {
			t.Errorf("worker %d: release: %v", i, err)
			return
		}
	}
}

// TestLimitFollowsTheDownstreamsCapacity drives a downstream whose capacity
// falls from 20 to 5 with more workers than either, and steps the controller
// each time enough reports have come in: the limit settles in a sawtooth
// around 20 (cut above 24, where p95 passes 1.2 × base), then comes down
// within a few decisions and settles around 5. It asserts ranges, not times.
func TestLimitFollowsTheDownstreamsCapacity(t *testing.T) {
	cl := Class{
		Name: "db", Initial: 10, Min: 1, Max: 60, TargetP95: 12 * time.Millisecond,
		MaxOverloadShare: 0.05, Interval: time.Hour, MinSamples: 30,
	}
	r := openRig(t, "", cl)
	defer r.close()
	r.step(true)
	a, _ := r.session("a")
	b, _ := r.session("b")
	d := &downstream{base: 10 * time.Millisecond}
	d.capacity.Store(20)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() { r.simWorker(t, i, []engine.ID{a, b}[i%2], d, &stop) })
	}
	defer func() { // before the store closes, also when the test fails
		stop.Store(true)
		must(t, r.do(&engine.Call{}, func(c *engine.Call) error {
			return r.store.Engine.SetLimit(c, engine.RootID, "db", nil) // let every waiter through
		}))
		wg.Wait()
	}()
	run := func(steps int) []int64 {
		var out []int64
		for range steps {
			r.awaitSamples("db", cl.MinSamples)
			_, err := r.ctl.Step("db")
			must(t, err)
			l, _ := r.limit("db")
			out = append(out, l)
		}
		return out
	}
	before := run(60)
	d.capacity.Store(5)
	after := run(60)
	t.Logf("capacity 20: %v", before)
	t.Logf("capacity 5: %v", after)
	settled(t, "capacity 20", before[30:], 14, 28, 18, 24)
	settled(t, "capacity 5", after[30:], 3, 8, 4, 6.5)
	if minimum := slices.Min(after[:8]); minimum > 8 {
		t.Errorf("8 decisions after the capacity fell to 5 the limit is still %d or more", minimum)
	}
}

// settled checks every limit of a window lies in [lo, hi] and their mean in
// [meanLo, meanHi].
func settled(t *testing.T, what string, limits []int64, lo, hi int64, meanLo, meanHi float64) {
	t.Helper()
	var sum int64
	for _, l := range limits {
		sum += l
		if l < lo || l > hi {
			t.Errorf("%s: limit %d outside [%d, %d] after settling: %v", what, l, lo, hi, limits)
		}
	}
	if mean := float64(sum) / float64(len(limits)); mean < meanLo || mean > meanHi {
		t.Errorf("%s: mean limit %.1f outside [%.0f, %.0f]: %v", what, mean, meanLo, meanHi, limits)
	}
}
