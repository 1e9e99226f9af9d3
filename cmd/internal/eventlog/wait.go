package eventlog

import (
	"context"
	"fmt"
)

// Add queues e to be committed. It never blocks and does no I/O: the engine
// calls it with its lock held. e.EventSeq() must be one more than the
// sequence number of the entry added before it (or than the durable mark
// given to NewWriter); anything else is a bug in the caller, and Add panics.
// After a failed commit or Stop, Add drops e: its Wait reports why.
func (w *Writer) Add(e Entry) {
	seq := e.EventSeq()
	w.mu.Lock()
	if seq != w.last+1 {
		last := w.last
		w.mu.Unlock()
		panic(fmt.Sprintf("eventlog: Add(event %d) after event %d: sequence numbers must be added in order without gaps", seq, last))
	}
	w.last = seq
	if w.err != nil || w.stopping {
		w.mu.Unlock()
		return
	}
	w.pending = append(w.pending, e)
	w.mu.Unlock()
	w.signal()
}

// Room waits while MaxBacklog events wait to be committed: back-pressure.
// Call it before taking the engine lock, never with it held. Concurrent
// callers may all pass at once, so the backlog can exceed MaxBacklog by the
// number of producers. It returns ctx.Err() if ctx ends first, and the
// writer's error once it failed or stopped.
func (w *Writer) Room(ctx context.Context) error {
	for {
		w.mu.Lock()
		if err := w.refusalLocked(); err != nil {
			w.mu.Unlock()
			return err
		}
		if w.last-w.durable.Load() < uint64(w.opts.MaxBacklog) {
			w.mu.Unlock()
			return nil
		}
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Wait returns nil once event seq is on record. It returns an error
// wrapping ErrCommitFailed once a commit failed before seq was on record,
// ErrStopped if the writer stopped first, ErrNotAdded if seq was never
// added, and ctx.Err() if ctx ends first; in that case the event stays
// applied and is still committed. Waiting for a durable seq costs one atomic
// load; waiters of one batch share one channel.
func (w *Writer) Wait(ctx context.Context, seq uint64) error {
	for seq > w.durable.Load() {
		done, err := w.batchOf(seq)
		if err != nil {
			return err
		}
		select {
		case <-done:
		case <-ctx.Done():
			if seq <= w.durable.Load() {
				return nil
			}
			return ctx.Err()
		}
	}
	return nil
}

// Accepted returns the last sequence number that will be on record unless
// a commit fails: the last added, while the writer has neither failed nor
// been stopped; otherwise the last on record. It never waits for a commit.
// A record that keeps nothing past the process (memory) may answer on it
// instead of Wait: its commit promises nothing the process does not hold
// already.
func (w *Writer) Accepted() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil || w.stopping {
		return w.durable.Load()
	}
	return w.last
}

// batchOf returns the channel that closes when the batch holding seq is
// settled, or why seq will never be on record.
func (w *Writer) batchOf(seq uint64) (<-chan struct{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case seq <= w.durable.Load():
		return closed, nil
	case w.err != nil:
		return nil, w.err
	case seq > w.last:
		return nil, fmt.Errorf("%w: event %d (the last added is %d)", ErrNotAdded, seq, w.last)
	case w.flight != nil && seq <= w.flight.last:
		return w.flight.done, nil
	case w.stopped:
		return nil, fmt.Errorf("%w: event %d was added after Stop", ErrStopped, seq)
	}
	return w.open.done, nil
}

// closed is a channel that is always ready.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// refusalLocked says why the writer takes no more work, or nil.
func (w *Writer) refusalLocked() error {
	switch {
	case w.err != nil:
		return w.err
	case w.stopping:
		return ErrStopped
	}
	return nil
}

// Durable returns the last sequence number on record.
func (w *Writer) Durable() uint64 { return w.durable.Load() }

// Failed returns a channel that is closed when a commit fails. The daemon
// stops serving on it: from then on the engine is ahead of the record.
func (w *Writer) Failed() <-chan struct{} { return w.failed }

// Err returns why a commit failed (wrapping ErrCommitFailed), or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
