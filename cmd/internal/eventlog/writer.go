package eventlog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Entry is an event waiting to be written. The engine hands one to Add with
// its lock held; the writer goroutine calls Encode later, without that lock,
// so an Entry must not change after Add and Encode must not touch engine
// state that is still changing.
type Entry interface {
	EventSeq() uint64
	EventTime() int64
	Encode() ([]byte, error)
}

// WriterOptions tune a Writer. The zero value is ready to use.
type WriterOptions struct {
	// MaxBacklog is how many added events may wait to be committed before
	// Room blocks. Zero means 8192.
	MaxBacklog int
	// MaxBatch is the most events one transaction carries. Zero means 4096.
	MaxBatch int
	// CommitTimeout bounds one Append; running out of it is a failed commit.
	// Zero means one minute.
	CommitTimeout time.Duration
	// MaxLinger bounds how long the writer waits after a commit for the
	// callers it released to add their next events, so they share one
	// commit instead of the first starting one alone (see await). It waits
	// no longer than the commit took, and not at all after commits under
	// 50 µs. Zero means 2 ms; a negative value turns the wait off.
	MaxLinger time.Duration
	// OnCommit, if set, is called on the writer goroutine after each
	// successful commit with its number of events and how long encoding and
	// committing took. It must not block.
	OnCommit func(events int, d time.Duration)
	// Done, if set, is called on the writer goroutine after each successful
	// commit and its OnCommit, with the batch's entries in sequence order
	// and the bytes their encodings took. Once it returns, the writer keeps
	// none of them, so it may hand them on for reuse. It must not block, nor
	// keep entries.
	Done func(entries []Entry, bytes int)
	// Logger receives the one error a failed commit logs. Nil means
	// slog.Default().
	Logger *slog.Logger
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.MaxBacklog <= 0 {
		o.MaxBacklog = 8192
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 4096
	}
	if o.CommitTimeout <= 0 {
		o.CommitTimeout = time.Minute
	}
	if o.MaxLinger == 0 {
		o.MaxLinger = 2 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Writer commits the engine's events to a Backend in batches (group
// commit): one goroutine takes every pending event, encodes them, appends
// them in one transaction and then completes every waiter they cover at
// once. Events added while a transaction is in flight form the next batch,
// so batches grow with load by themselves.
//
// Its methods are safe for concurrent use. Add never blocks; Room, Wait and
// Stop may.
type Writer struct {
	backend Backend
	opts    WriterOptions

	durable atomic.Uint64 // the last sequence number on record; only grows
	failed  chan struct{} // closed when a commit fails
	wake    chan struct{} // one token: entries are pending or Stop was called
	exited  chan struct{} // closed when the writer goroutine has returned
	ctx     context.Context
	cancel  context.CancelFunc // aborts an Append when Stop runs out of time
	start   sync.Once

	mu       sync.Mutex    // guards the fields below
	last     uint64        // sequence number of the last entry added
	pending  []Entry       // added and not yet taken by the writer goroutine
	spare    []Entry       // an empty buffer to swap with pending
	open     *batch        // completes when the pending entries are on record
	flight   *batch        // the batch being committed; nil when idle
	room     chan struct{} // closed when the backlog shrinks; nil if no one waits
	err      error         // why a commit failed; nil until one did
	stopping bool          // Stop was called: take no more entries
	stopped  bool          // the goroutine committed what was pending and left
}

// batch is what waiters for a group of sequence numbers block on.
type batch struct {
	done chan struct{} // closed when the batch is on record, failed or abandoned
	last uint64        // its last sequence number, once taken for a commit
}

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// NewWriter returns a writer for b whose record already ends at sequence
// number durable (0 for an empty record): the first Add must carry
// durable+1. Call Start to begin committing.
func NewWriter(b Backend, durable uint64, opts WriterOptions) *Writer {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Writer{
		backend: b,
		opts:    opts.withDefaults(),
		failed:  make(chan struct{}),
		wake:    make(chan struct{}, 1),
		exited:  make(chan struct{}),
		ctx:     ctx,
		cancel:  cancel,
		last:    durable,
		open:    newBatch(),
	}
	w.durable.Store(durable)
	return w
}

// Start starts the writer goroutine, which owns the backend's write path
// until Stop. Calling it again, or after Stop, does nothing.
func (w *Writer) Start() {
	w.start.Do(func() { go w.run() })
}

// Stop commits every entry added before it, then stops the writer
// goroutine and waits for it. Entries added after Stop are never committed:
// their Wait returns ErrStopped. If ctx ends first, Stop aborts the commit in
// flight (which fails the writer) and returns ctx.Err() without waiting
// further. Otherwise it returns the commit failure, if there was one. It may
// be called more than once, and without Start. It does not close the
// backend.
func (w *Writer) Stop(ctx context.Context) error {
	w.Start()
	w.mu.Lock()
	w.stopping = true
	w.wakeRoomLocked()
	w.mu.Unlock()
	w.signal()
	select {
	case <-w.exited:
		w.cancel()
		return w.Err()
	case <-ctx.Done():
		w.cancel()
		return ctx.Err()
	}
}

// signal wakes the writer goroutine without blocking.
func (w *Writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// wakeRoomLocked releases every producer blocked in Room so they look again.
func (w *Writer) wakeRoomLocked() {
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
}
