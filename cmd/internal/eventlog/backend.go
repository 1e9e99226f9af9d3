package eventlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	neturl "net/url"
	"strings"
)

// Record is one committed event: its sequence number, the engine's time
// (unix nanoseconds) and its encoding, which this package never reads.
type Record struct {
	Seq  uint64
	Time int64
	Data []byte
}

// Snapshot is the engine's whole state as of event Seq, encoded.
type Snapshot struct {
	Seq  uint64
	Time int64
	Data []byte
}

// Backend is the durable store. Implementations are safe for concurrent use
// and assume they are the only writer of their store.
//
// The record is a snapshot (or nothing) followed by events numbered without a
// gap. Every method keeps it so: what breaks it is refused with ErrSequence
// and nothing is written.
type Backend interface {
	// Append writes recs in one transaction: all or none. Their sequence
	// numbers continue the record: the first is one more than the last on
	// record, and each is one more than the one before.
	Append(ctx context.Context, recs []Record) error
	// SaveSnapshot stores snap and, in the same transaction, deletes every
	// event it covers (Seq <= snap.Seq) and every older snapshot. snap.Seq
	// may not be ahead of the record (Wait for it first) nor older than the
	// newest snapshot.
	SaveSnapshot(ctx context.Context, snap Snapshot) error
	// Load reads the record back: it calls restore once with the newest
	// snapshot (nil if there is none), then replay for every event after it,
	// in order. It reads one consistent view, stops at the first error from
	// restore or replay and returns it.
	Load(ctx context.Context, restore func(*Snapshot) error, replay func(Record) error) error
	// StreamSnapshot is SaveSnapshot for a snapshot written, by write, as
	// it is stored: SQLite and PostgreSQL stage it in chunks of ChunkSize
	// bytes, each in a transaction of its own, and publish them in one
	// transaction that also deletes the events it covers, so no buffer the
	// size of the snapshot is needed. If write fails or the process dies
	// first, the record is as it was: Load never sees an unfinished
	// snapshot, and the next StreamSnapshot deletes its chunks.
	StreamSnapshot(ctx context.Context, seq uint64, time int64, write func(io.Writer) error) error
	// Close releases the store. Calls after Close return ErrClosed or the
	// driver's error.
	Close() error
}

// The accepted URL forms, for error messages.
const urlForms = `"sqlite:PATH", "postgres://…" or "postgresql://…", or "" for memory`

type backendKind int

const (
	kindMemory backendKind = iota
	kindSQLite
	kindPostgres
)

// parseURL says which backend url names and what to hand it.
func parseURL(url string) (backendKind, string, error) {
	switch {
	case url == "":
		return kindMemory, "", nil
	case strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(url, "sqlite:")
		if path == "" || strings.HasPrefix(path, "//") || strings.ContainsRune(path, 0) {
			return 0, "", fmt.Errorf("%w: %q: want sqlite:PATH with a file path (accepted: %s)", ErrURL, url, urlForms)
		}
		return kindSQLite, path, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return kindPostgres, url, nil
	}
	return 0, "", fmt.Errorf("%w: %q (accepted: %s)", ErrURL, redact(url), urlForms)
}

// Open opens the backend that url names, applying schema migrations:
// "sqlite:PATH" is one SQLite file (plus its write-ahead log) that no other
// process may open; "postgres://…" or "postgresql://…" is a PostgreSQL
// database; "" is memory, and Open warns loudly that nothing is durable.
// A nil log means slog.Default().
func Open(ctx context.Context, url string, log *slog.Logger) (Backend, error) {
	if log == nil {
		log = slog.Default()
	}
	kind, target, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	switch kind {
	case kindSQLite:
		return openSQLite(ctx, target, log)
	case kindPostgres:
		return openPostgres(ctx, target, log)
	}
	log.Warn("THE EVENT LOG IS IN MEMORY: NOTHING IS DURABLE. A restart loses every quota, lease and session; " +
		"set an event log URL (sqlite:PATH or postgres://…) for anything but a test")
	return NewMemory(), nil
}

// redact hides any password in url, for messages and logs.
func redact(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}
