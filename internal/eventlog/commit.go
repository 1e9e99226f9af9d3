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
	for {
		entries, ok := w.take()
		if !ok {
			return
		}
		recs = w.commit(entries, recs[:0])
		clear(entries)
		clear(recs)
		w.mu.Lock()
		w.spare = entries[:0]
		w.mu.Unlock()
		// Let the producers this commit released run before taking the
		// next batch: they add their next events in a few microseconds,
		// and joining the batch that is pending now saves them a whole
		// commit of waiting.
		runtime.Gosched()
	}
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
	for _, e := range entries {
		data, err := e.Encode()
		if err != nil {
			w.fail(fmt.Errorf("encode event %d: %w", e.EventSeq(), err))
			return recs
		}
		recs = append(recs, Record{Seq: e.EventSeq(), Time: e.EventTime(), Data: data})
	}
	ctx, cancel := context.WithTimeout(w.ctx, w.opts.CommitTimeout)
	err := w.backend.Append(ctx, recs)
	cancel()
	if err != nil {
		w.fail(fmt.Errorf("append events %d to %d: %w", recs[0].Seq, recs[len(recs)-1].Seq, err))
		return recs
	}
	w.committed(recs[len(recs)-1].Seq)
	if w.opts.OnCommit != nil {
		w.opts.OnCommit(len(recs), time.Since(began))
	}
	return recs
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
