package bench

import "sync"

// fifo is the baseline a pool without governord offers: a counting
// semaphore that grants strictly in arrival order, whoever asks. Make one
// with newFIFO. Safe for concurrent use.
type fifo struct {
	mu      sync.Mutex    // guards the fields below
	free    int           // slots not granted
	waiters []*fifoWaiter // in arrival order
	granted uint64        // grants so far: the order of the last one
}

// fifoWaiter is one acquire that waits; done is closed once order is set.
type fifoWaiter struct {
	order uint64
	done  chan struct{}
}

func newFIFO(slots int) *fifo { return &fifo{free: slots} }

// acquire waits for a slot and returns the grant's place in the order of
// grants, from 1.
func (f *fifo) acquire() uint64 {
	f.mu.Lock()
	if f.free > 0 && len(f.waiters) == 0 {
		f.free--
		f.granted++
		order := f.granted
		f.mu.Unlock()
		return order
	}
	w := &fifoWaiter{done: make(chan struct{})}
	f.waiters = append(f.waiters, w)
	f.mu.Unlock()
	<-w.done
	return w.order
}

// release frees a slot, handing it to the first waiter.
func (f *fifo) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		f.free++
		return
	}
	w := f.waiters[0]
	f.waiters = f.waiters[1:]
	f.granted++
	w.order = f.granted
	close(w.done)
}

// queued is how many acquires wait.
func (f *fifo) queued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}
