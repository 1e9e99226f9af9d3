package cluster

import "governor.dev/governor/cmd/internal/engine"

// waiters are the queued acquires of a replica, by the log index of the
// Acquire that first queued them, so that an Abandon in the log names one the
// same way on every replica. A waiter is forgotten when abandoned, or once
// it is settled (engine.Engine.Settled), which the replica checks each
// time the count doubles: forgetting a settled waiter changes nothing an
// Abandon would do, and every replica forgets at the same log index.
type waiters struct {
	byIndex map[uint64]*engine.Waiter
	index   map[*engine.Waiter]uint64
	sweepAt int // count at which the next sweep runs
}

const minSweep = 64

func newWaiters() waiters {
	return waiters{byIndex: make(map[uint64]*engine.Waiter), index: make(map[*engine.Waiter]uint64), sweepAt: minSweep}
}

// keepWaiter keeps w by the log index of the Acquire that queued it. A
// retried Acquire that re-attached to w (engine.Engine.Acquire with its
// request id) leaves it under its first index, the one every replica and
// every snapshot knows it by.
func (f *FSM) keepWaiter(index uint64, w *engine.Waiter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := &f.waiters
	if _, kept := ws.index[w]; kept {
		return
	}
	ws.byIndex[index], ws.index[w] = w, index
	if len(ws.byIndex) < ws.sweepAt {
		return
	}
	e := f.Engine()
	for i, w := range ws.byIndex {
		if e.Settled(w) {
			delete(ws.byIndex, i)
			delete(ws.index, w)
		}
	}
	ws.sweepAt = max(minSweep, 2*len(ws.byIndex))
}

func (f *FSM) takeWaiter(index uint64) *engine.Waiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.waiters.byIndex[index]
	delete(f.waiters.byIndex, index)
	delete(f.waiters.index, w)
	return w
}

// waiterIndex returns the log index of the Acquire that queued w, if this
// replica still keeps it.
func (f *FSM) waiterIndex(w *engine.Waiter) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, ok := f.waiters.index[w]
	return i, ok
}

// keptWaiters returns how many waiters the replica keeps.
func (f *FSM) keptWaiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters.byIndex)
}
