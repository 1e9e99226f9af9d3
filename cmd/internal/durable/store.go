package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
)

// Options configure a Store.
type Options struct {
	// URL chooses the record: "sqlite:PATH", "postgres://…", or "" for
	// memory (nothing survives a restart).
	URL string
	// Clock is the engine's clock. Required.
	Clock engine.Clock
	// Settings, if set, are recorded at start when they differ from the
	// record's.
	Settings *engine.Settings
	// SnapshotEvery is how many events accumulate before a snapshot; zero
	// means 100,000.
	SnapshotEvery uint64
	// SnapshotInterval, if positive, also takes a snapshot at the first
	// event once this much of the engine's time has passed since the last
	// one, however few events came since.
	SnapshotInterval time.Duration
	// SnapshotBytes, if positive, also takes a snapshot at the first event
	// once the events committed since the last one took this many bytes.
	SnapshotBytes int64
	// Writer tunes group commit. Its Done is the store's own and is
	// overwritten.
	Writer eventlog.WriterOptions
	// Committed, if set, receives every event once it is on record, in
	// order, on the writer goroutine after each commit. It must not block:
	// watchers, metrics and controllers see only what is durable. It must
	// not keep evs or the events past its return: the engine reuses them.
	Committed func(evs []*engine.Event)
	// Logger receives start-up and snapshot messages; nil means slog.Default().
	Logger *slog.Logger
}

// Store is the engine with its durable record. Its methods are safe for
// concurrent use.
type Store struct {
	Engine *engine.Engine

	backend eventlog.Backend
	writer  *eventlog.Writer
	sink    *sink
	log     *slog.Logger

	volatile  bool                      // the record is in memory: Wait needs no commit
	committed func(evs []*engine.Event) // Options.Committed
	batch     []*engine.Event           // the writer goroutine's buffer for done

	snapDone chan struct{}   // closed when the snapshot goroutine has returned
	stop     chan struct{}   // closed by Close
	now      chan chan error // SnapshotNow's requests
	close    sync.Once
	closeErr error

	mu    sync.Mutex // guards stats
	stats Stats
}

// Stats count what the snapshot goroutine did.
type Stats struct {
	Snapshots      int
	SnapshotErrors int
	LastSnapshot   uint64 // sequence number of the last snapshot saved
}

// sink hands every event to the writer and asks for a snapshot when enough
// events, time or bytes have accumulated since the last time it asked.
// Emit runs with the engine lock held, which guards n and since.
type sink struct {
	w        *eventlog.Writer
	n        uint64 // events since the last ask
	since    int64  // engine time of the last ask, or of the snapshot loaded, or of the first event
	bytes    atomic.Int64
	every    uint64
	interval int64 // nanoseconds; 0: no time trigger
	maxBytes int64 // 0: no size trigger
	trigger  chan struct{}
}

func (s *sink) Emit(ev *engine.Event) {
	s.w.Add(ev)
	if s.since == 0 {
		s.since = ev.Time
	}
	s.n++
	if s.n < s.every && (s.interval == 0 || ev.Time-s.since < s.interval) && (s.maxBytes == 0 || s.bytes.Load() < s.maxBytes) {
		return
	}
	s.n, s.since = 0, ev.Time
	s.bytes.Store(0)
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}

// committed counts the bytes of events on record, for the size trigger. It
// runs on the writer goroutine.
func (s *sink) committed(bytes int) {
	if s.maxBytes > 0 {
		s.bytes.Add(int64(bytes))
	}
}

// Open loads the record at opts.URL and returns the engine rebuilt from it,
// ready to serve.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Clock == nil {
		return nil, errors.New("durable: a clock is required")
	}
	if opts.SnapshotInterval < 0 || opts.SnapshotBytes < 0 {
		return nil, fmt.Errorf("durable: snapshot interval %s and bytes %d must not be negative (0 turns each off)", opts.SnapshotInterval, opts.SnapshotBytes)
	}
	if opts.SnapshotEvery == 0 {
		opts.SnapshotEvery = 100_000
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	b, err := eventlog.Open(ctx, opts.URL, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	s := &Store{backend: b, log: opts.Logger, stop: make(chan struct{}), snapDone: make(chan struct{}), now: make(chan chan error), committed: opts.Committed}
	_, s.volatile = b.(*eventlog.Memory)
	s.sink = &sink{every: opts.SnapshotEvery, interval: int64(opts.SnapshotInterval), maxBytes: opts.SnapshotBytes, trigger: make(chan struct{}, 1)}
	opts.Writer.Done = s.done
	img, err := s.load(ctx, opts)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	s.sink.since = img.Time() // the interval runs from the loaded snapshot (0: from the first event)
	s.writer = eventlog.NewWriter(b, s.Engine.Seq(), opts.Writer)
	s.sink.w = s.writer
	s.writer.Start()
	s.Engine.Revive()
	go s.snapshots(img)
	if opts.Settings != nil {
		if err := s.configure(ctx, *opts.Settings); err != nil {
			_ = s.Close(ctx)
			return nil, err
		}
	}
	return s, nil
}

func (s *Store) configure(ctx context.Context, set engine.Settings) error {
	c := &engine.Call{}
	if err := s.Engine.Configure(c, set); err != nil {
		return fmt.Errorf("record settings: %w", err)
	}
	return s.Wait(ctx, c.Seq)
}

// done runs on the writer goroutine with each batch once it is on record:
// it counts its bytes for the size trigger, hands it to Options.Committed,
// then gives its events back to the engine for reuse.
func (s *Store) done(entries []eventlog.Entry, bytes int) {
	s.sink.committed(bytes)
	evs := s.batch[:0]
	for _, en := range entries {
		evs = append(evs, en.(*engine.Event))
	}
	if s.committed != nil {
		s.committed(evs)
	}
	s.Engine.Recycle(evs)
	clear(evs)
	s.batch = evs[:0]
}

// Room waits while the writer's backlog is full. Call it before an engine
// operation, outside the engine lock: it is the back-pressure that keeps
// memory bounded under load.
func (s *Store) Room(ctx context.Context) error { return s.writer.Room(ctx) }

// Wait returns once event seq is on record. An answer that depends on state up
// to seq may be given only after Wait returned nil. With the record in
// memory, which keeps nothing past the process, an event is on record as
// soon as the writer accepted it (eventlog.Writer.Accepted), and Wait does
// not wait for the writer goroutine: the commit that follows still hands
// the event to Committed, in order, but a caller's answer no longer pays
// two goroutine hand-offs for it.
func (s *Store) Wait(ctx context.Context, seq uint64) error {
	if s.volatile && seq <= s.writer.Accepted() {
		return nil
	}
	return s.writer.Wait(ctx, seq)
}

// Durable returns the last sequence number on record (in memory: accepted,
// as Wait says).
func (s *Store) Durable() uint64 {
	if s.volatile {
		return s.writer.Accepted()
	}
	return s.writer.Durable()
}

// Failed is closed when a commit has failed. The engine is then ahead of its
// record: the daemon must stop serving and exit, so that a supervisor starts
// it again from the record.
func (s *Store) Failed() <-chan struct{} { return s.writer.Failed() }

// Err returns why a commit failed, or nil.
func (s *Store) Err() error { return s.writer.Err() }

// Stats returns what the snapshot goroutine has done.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Close stops the snapshot goroutine, commits what is pending and closes the
// record. It may be called more than once.
func (s *Store) Close(ctx context.Context) error {
	s.close.Do(func() {
		close(s.stop)
		<-s.snapDone
		err := s.writer.Stop(ctx)
		s.closeErr = errors.Join(err, s.backend.Close())
	})
	return s.closeErr
}
