package eventlog

import (
	"context"
	"sync"
)

// double is a Backend for writer tests: a Memory whose Appends can be held
// back or failed on demand, and are counted.
type double struct {
	*Memory
	entered chan uint64 // receives the first sequence number of each Append as it begins

	mu      sync.Mutex    // guards the fields below
	gate    chan struct{} // when set, Append waits for it to close or for its ctx
	fail    error         // when set, Append returns it
	appends int           // Appends that reached the store
}

var _ Backend = (*double)(nil)

func newDouble() *double {
	return &double{Memory: NewMemory(), entered: make(chan uint64, 1<<16)}
}

func (d *double) Append(ctx context.Context, recs []Record) error {
	d.entered <- recs[0].Seq
	d.mu.Lock()
	gate, fail := d.gate, d.fail
	d.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail != nil {
		return fail
	}
	d.mu.Lock()
	d.appends++
	d.mu.Unlock()
	return d.Memory.Append(ctx, recs)
}

// hold makes every Append from now on wait until the returned function is
// called.
func (d *double) hold() (release func()) {
	gate := make(chan struct{})
	d.mu.Lock()
	d.gate = gate
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		d.gate = nil
		d.mu.Unlock()
		close(gate)
	}
}

// failWith makes every Append from now on return err.
func (d *double) failWith(err error) {
	d.mu.Lock()
	d.fail = err
	d.mu.Unlock()
}

func (d *double) appendCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.appends
}
