package eventlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/pgtest"
)

// quiet is a logger for backends under test.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// entry is a test event: its data says which event it is, so a record can
// be checked against its sequence number.
type entry struct {
	seq uint64
	err error // returned by Encode when set
}

func (e entry) EventSeq() uint64        { return e.seq }
func (e entry) EventTime() int64        { return eventTime(e.seq) }
func (e entry) Encode() ([]byte, error) { return eventData(e.seq), e.err }

func eventTime(seq uint64) int64 { return int64(seq) * 1000 }

// eventData is about 100 bytes naming seq.
func eventData(seq uint64) []byte {
	return fmt.Appendf(nil, "event %020d %078s", seq, "x")
}

func snapshotData(seq uint64) []byte { return fmt.Appendf(nil, "state after %d", seq) }

// engine stands in for the real engine: a lock, a counter assigning sequence
// numbers, and Add under the lock.
type engine struct {
	w  *Writer
	mu sync.Mutex // guards n
	n  uint64
}

func newEngine(w *Writer, durable uint64) *engine { return &engine{w: w, n: durable} }

// emit applies one change: Room, then Add under the lock.
func (e *engine) emit(ctx context.Context) (uint64, error) {
	if err := e.w.Room(ctx); err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	e.w.Add(entry{seq: e.n})
	return e.n, nil
}

// do applies one change and waits until it is on record: write before reply.
func (e *engine) do(ctx context.Context) (uint64, error) {
	seq, err := e.emit(ctx)
	if err != nil {
		return 0, err
	}
	return seq, e.w.Wait(ctx, seq)
}

// loaded is what Load handed back.
type loaded struct {
	snap *Snapshot
	recs []Record
}

func load(t testing.TB, b Backend) loaded {
	t.Helper()
	var l loaded
	err := b.Load(context.Background(), func(s *Snapshot) error {
		l.snap = s
		return nil
	}, func(r Record) error {
		l.recs = append(l.recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return l
}

// last is the sequence number the record ends at.
func (l loaded) last() uint64 {
	if len(l.recs) > 0 {
		return l.recs[len(l.recs)-1].Seq
	}
	if l.snap != nil {
		return l.snap.Seq
	}
	return 0
}

// records makes events from..to as Append takes them.
func records(from, to uint64) []Record {
	var out []Record
	for s := from; s <= to; s++ {
		out = append(out, Record{Seq: s, Time: eventTime(s), Data: eventData(s)})
	}
	return out
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// backendCase names a kind of store and how to make a fresh one.
type backendCase struct {
	name    string
	durable bool                      // survives Close and reopen
	newURL  func(t testing.TB) string // a fresh, empty store's URL
}

var backendCases = []backendCase{
	{name: "memory", newURL: func(testing.TB) string { return "" }},
	{name: "sqlite", durable: true, newURL: func(t testing.TB) string {
		return "sqlite:" + filepath.Join(t.TempDir(), "events.db")
	}},
	{name: "postgres", durable: true, newURL: pgtest.DSN},
}

// openURL opens url and closes it when t ends.
func openURL(t testing.TB, url string) Backend {
	t.Helper()
	b, err := Open(ctxT(t), url, quiet)
	if err != nil {
		t.Fatalf("Open(%s): %v", redact(url), err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
