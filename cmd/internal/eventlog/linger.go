package eventlog

import "time"

// minLinger is the shortest commit after which the writer gathers and
// waits for the callers it released: a disk's commits take longer,
// memory's far less, and for them arranging the wait would cost more than
// a second commit (and in memory no caller waits for a commit at all).
const minLinger = 50 * time.Microsecond

// lingerPause is how many commits the writer goes without waiting after a
// wait that ran out: the callers it released did not come back in time,
// so the load is not a closed loop of that many callers (a pool whose
// holders release now and then, say), where waiting only delays the ones
// who did come.
const lingerPause = 16

// linger is the writer goroutine's memory of whether waiting pays.
type linger struct {
	timer *time.Timer // stopped between waits
	pause int         // commits still to go without waiting
}

func newLinger() *linger {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &linger{timer: t}
}

// due reports whether the writer should wait after this commit, counting
// down a pause.
func (l *linger) due() bool {
	if l.pause > 0 {
		l.pause--
		return false
	}
	return true
}

// met takes the outcome of a wait: one that ran out pauses waiting.
func (l *linger) met(ok bool) {
	if !ok {
		l.pause = lingerPause
	}
}

// await waits, for at most limit, until as many entries are pending as
// the last commit carried, and reports whether they came. In a closed
// loop the callers a commit released come back with their next events one
// network round trip later; if the first of them started a commit alone,
// the rest would wait for all of it before their own could start, paying
// two commits instead of one. limit is at most what the last commit took,
// so an event that arrives while no one else comes waits at most about one
// commit more, as it would behind a commit in flight. A lone caller whose
// calls each add one event never waits: it is the whole of its commit.
// timer is the writer goroutine's own, and stopped.
func (w *Writer) await(released int, limit time.Duration, timer *time.Timer) bool {
	target := min(released, w.opts.MaxBatch)
	if w.gathered(target) {
		return true
	}
	timer.Reset(limit)
	defer timer.Stop()
	for {
		select {
		case <-w.wake: // take looks at pending itself, so the token is not needed back
			if w.gathered(target) {
				return true
			}
		case <-timer.C:
			return false
		}
	}
}

// gathered reports whether target entries are pending, or the writer has
// no reason to wait for more: it is stopping or failed.
func (w *Writer) gathered(target int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) >= target || w.stopping || w.err != nil
}
