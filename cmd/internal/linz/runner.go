package linz

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Run drives concurrent clients against a Target while faults are made, and
// records what each client saw.
type Run struct {
	Target   Target
	Clients  int           // concurrent clients, each making one call at a time
	Readers  int           // of the clients, how many only read, so reads go on while writers wait
	Pause    time.Duration // how long a reader waits between reads
	Duration time.Duration // how long clients make calls
	Keys     int           // quota keys, named k0, k1, …
	Seed     uint64        // seeds each client's choice of calls
	Retries  int           // further attempts of a Consume after ones with unknown outcomes
	Faults   []Fault       // made in order during the run
	Timeout  time.Duration // bounds each call
}

// Fault is one step of a fault schedule: Do runs After the step before it
// (or the start of the run).
type Fault struct {
	After time.Duration
	Name  string
	Do    func() error
}

// History is what a run recorded: the quota calls, for Quota or Idempotent,
// and the lease calls, for LeasePool.
type History struct {
	Quota  []porcupine.Operation
	Leases []porcupine.Operation
}

// Go runs the clients for r.Duration and the faults alongside, and returns
// the history once every client stopped. It fails when a fault fails, or
// when the run is set up wrong.
func (r Run) Go(ctx context.Context) (History, error) {
	if r.Target == nil || r.Clients < 1 || r.Readers < 0 || r.Readers > r.Clients || r.Pause < 0 || r.Keys < 1 || r.Duration <= 0 || r.Timeout <= 0 || r.Retries < 0 {
		return History{}, fmt.Errorf("linz: run needs a target, clients ≥ 1, readers from 0 to clients, a pause ≥ 0, keys ≥ 1, a positive duration and timeout, and retries ≥ 0; got %+v", r)
	}
	ctx, cancel := context.WithTimeout(ctx, r.Duration)
	defer cancel()
	quota, leases := NewRecorder(), NewRecorder()
	var wg sync.WaitGroup
	for c := range r.Clients {
		cl := &client{run: &r, id: c, reader: c < r.Readers, rng: rand.New(rand.NewPCG(r.Seed, uint64(c))), quota: quota, leases: leases}
		wg.Go(func() { cl.loop(ctx) })
	}
	faultErr := make(chan error, 1)
	go func() { faultErr <- r.schedule(ctx) }()
	wg.Wait()
	err := <-faultErr
	return History{Quota: quota.History(), Leases: leases.History()}, err
}

// schedule makes the faults in order until they are done or ctx ends.
func (r Run) schedule(ctx context.Context) error {
	for _, f := range r.Faults {
		timer := time.NewTimer(f.After)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
		if err := f.Do(); err != nil {
			return fmt.Errorf("fault %q: %w", f.Name, err)
		}
	}
	return nil
}

// outcome records the end of a call from its error: returned, forgotten
// (surely no effect) or unknown. It tells whether the call returned.
func outcome(c Call, err error, output func() any) bool {
	switch {
	case err == nil:
		c.Return(output())
		return true
	case isNotApplied(err):
		c.Forget()
	default:
		c.Unknown()
	}
	return false
}

func isNotApplied(err error) bool { return errors.Is(err, ErrNotApplied) }
