package eventlog

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// run is the writer goroutine: take what is pending, commit it, repeat.
func (w *Writer) run() {
	defer close(w.exited)
	var recs []Record
	l := newLinger()
	for {
		entries, ok := w.take()
		if !ok {
			return
		}
		began := time.Now()
		recs = w.commit(entries, recs[:0])
		took := time.Since(began)
		released := len(entries)
		clear(entries)
		clear(recs)
		w.mu.Lock()
		w.spare = entries[:0]
		n := len(w.pending)
		w.mu.Unlock()
		if took < minLinger {
			continue // a record in memory, whose callers do not wait for it
		}
		w.gather(n)
		if w.opts.MaxLinger > 0 && l.due() {
			l.met(w.await(released, min(took, w.opts.MaxLinger), l.timer))
		}
	}
}

// gatherYields bounds how many times gather yields in a row.
const gatherYields = 16

// gather lets the producers the last commit released run before the next
// batch is taken: they add their next events within microseconds, and
// joining the pending batch saves each of them a whole commit of waiting. It
// yields the processor while each yield brought more entries, and stops as
// soon as one brought none, the batch is full, or gatherYields have passed,
// so an idle or lightly loaded writer loses no time. n is how many entries
// are pending as it starts. It does not run after a commit under
// minLinger: the record is in memory, whose callers answer without waiting
// for a commit (durable.Store.Wait), so no one is released to come back,
// and yielding would only cost the callers a scheduler round each time.
func (w *Writer) gather(n int) {
	for range gatherYields {
		runtime.Gosched()
		m := w.pendingLen()
		if m == n || m >= w.opts.MaxBatch {
			return
		}
		n = m
	}
}

func (w *Writer) pendingLen() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// take blocks until entries are pending and takes up to MaxBatch of them as
// the batch in flight. It reports false when the goroutine must leave: a
// commit failed, or Stop was called and nothing is left to commit.
func (w *Writer) take() ([]Entry, bool) {
	for {
		w.mu.Lock()
		if w.err != nil {
			w.mu.Unlock()
			return nil, false
		}
		if len(w.pending) > 0 {
			taken := w.takeLocked()
			w.mu.Unlock()
			return taken, true
		}
		if w.stopping {
			w.stopped = true
			close(w.open.done)
			w.mu.Unlock()
			return nil, false
		}
		w.mu.Unlock()
		<-w.wake
	}
}

func (w *Writer) takeLocked() []Entry {
	var taken []Entry
	if n := len(w.pending); n <= w.opts.MaxBatch {
		taken, w.pending, w.spare = w.pending, w.spare, nil
	} else {
		taken = append(w.spare, w.pending[:w.opts.MaxBatch]...)
		rest := copy(w.pending, w.pending[w.opts.MaxBatch:])
		clear(w.pending[rest:])
		w.pending, w.spare = w.pending[:rest], nil
	}
	w.flight, w.open = w.open, newBatch()
	w.flight.last = w.durable.Load() + uint64(len(taken))
	return taken
}

// commit encodes entries into recs and appends them in one transaction,
// then completes the batch in flight, or fails the writer. It returns recs
// for reuse.
func (w *Writer) commit(entries []Entry, recs []Record) []Record {
	began := time.Now()
	size := 0
	for _, e := range entries {
		data, err := e.Encode()
		if err != nil {
			w.fail(fmt.Errorf("encode event %d: %w", e.EventSeq(), err))
			return recs
		}
		size += len(data)
		recs = append(recs, Record{Seq: e.EventSeq(), Time: e.EventTime(), Data: data})
	}
	if err := w.append(recs); err != nil {
		w.fail(fmt.Errorf("append events %d to %d: %w", recs[0].Seq, recs[len(recs)-1].Seq, err))
		return recs
	}
	w.committed(recs[len(recs)-1].Seq)
	if w.opts.OnCommit != nil {
		w.opts.OnCommit(len(recs), time.Since(began))
	}
	if w.opts.Done != nil {
		w.opts.Done(entries, size)
	}
	return recs
}

// immediate is a Backend whose Append neither waits nor reads its context,
// such as Memory: its commits need no CommitTimeout, whose timer would cost
// more than the commit itself.
type immediate interface {
	Backend
	appendsAtOnce()
}

// append writes recs in one Append, bounded by CommitTimeout unless the
// backend appends at once.
func (w *Writer) append(recs []Record) error {
	if _, ok := w.backend.(immediate); ok {
		return w.backend.Append(w.ctx, recs)
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.opts.CommitTimeout)
	defer cancel()
	return w.backend.Append(ctx, recs)
}

// committed moves the durable mark to last and wakes every waiter of the
// batch in one step.
func (w *Writer) committed(last uint64) {
	w.mu.Lock()
	w.durable.Store(last)
	done := w.flight.done
	w.flight = nil
	if w.last-last < uint64(w.opts.MaxBacklog) {
		w.wakeRoomLocked()
	}
	w.mu.Unlock()
	close(done)
}

// fail makes the writer refuse everything from now on: the engine holds
// changes that are not on record, and only a restart from the record is
// safe.
func (w *Writer) fail(cause error) {
	w.mu.Lock()
	w.err = fmt.Errorf("%w: %w", ErrCommitFailed, cause)
	err := w.err
	flight, open := w.flight, w.open
	w.flight, w.pending = nil, nil
	w.wakeRoomLocked()
	w.mu.Unlock()
	close(w.failed)
	close(flight.done)
	close(open.done)
	w.opts.Logger.Error("event log commit failed: the process must restart from the record", "err", err, "durable_seq", w.durable.Load())
}
