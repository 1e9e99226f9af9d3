package eventlog

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// streamData is a snapshot's worth of random bytes: n of them.
func streamData(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 15))
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(r.Uint32())
	}
	return out
}

// writeIn returns a write func that writes data in pieces of odd sizes, then
// returns err.
func writeIn(data []byte, err error) func(io.Writer) error {
	return func(w io.Writer) error {
		for rest, k := data, 1; len(rest) > 0; k = k*3 + 1 {
			n := min(len(rest), k)
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return err
	}
}

// testStreamSnapshot streams snapshots of several chunks and checks that
// each loads whole, replaces the one before with its chunks, and deletes
// the events it covers.
func testStreamSnapshot(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	url := bc.newURL(t)
	b := openURL(t, url)
	must(t, b.Append(ctx, records(1, 20)))
	for _, tc := range []struct {
		seq  uint64
		size int
	}{{10, 5*ChunkSize/2 + 7}, {15, ChunkSize}, {15, 3}} {
		data := streamData(tc.size)
		must(t, b.StreamSnapshot(ctx, tc.seq, eventTime(tc.seq), writeIn(data, nil)))
		l := load(t, b)
		if l.snap == nil || l.snap.Seq != tc.seq || l.snap.Time != eventTime(tc.seq) || !bytes.Equal(l.snap.Data, data) {
			t.Fatalf("streamed a snapshot of %d bytes at %d; loaded %+v", tc.size, tc.seq, l.snap)
		}
		if len(l.recs) != int(20-tc.seq) || l.recs[0].Seq != tc.seq+1 {
			t.Fatalf("after a streamed snapshot at %d: %d events from %d, want %d from %d", tc.seq, len(l.recs), l.recs[0].Seq, 20-tc.seq, tc.seq+1)
		}
		if want := (tc.size + ChunkSize - 1) / ChunkSize; bc.durable && stagedChunks(t, bc.name, url, &b) != want {
			t.Fatalf("a snapshot of %d bytes left %d chunks on record, want %d", tc.size, stagedChunks(t, bc.name, url, &b), want)
		}
	}
	must(t, b.SaveSnapshot(ctx, snapshotAt(20)))
	checkLoad(t, load(t, b), 20, 20)
	if bc.durable && stagedChunks(t, bc.name, url, &b) != 0 {
		t.Fatalf("an inline snapshot left %d chunks of the streamed one before it", stagedChunks(t, bc.name, url, &b))
	}
}

// testStreamSnapshotFails fails a stream after two chunks: the record keeps
// its snapshot and events, the error comes back, and the next stream drops
// the staged chunks. A stream ahead of the record writes nothing.
func testStreamSnapshotFails(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	url := bc.newURL(t)
	b := openURL(t, url)
	must(t, b.Append(ctx, records(1, 10)))
	must(t, b.SaveSnapshot(ctx, snapshotAt(5)))
	boom := errors.New("the snapshot's encoder failed")
	if err := b.StreamSnapshot(ctx, 8, eventTime(8), writeIn(streamData(2*ChunkSize+1), boom)); !errors.Is(err, boom) {
		t.Fatalf("a failed stream returned %v, want the write's error", err)
	}
	checkLoad(t, load(t, b), 5, 10)
	if bc.durable && stagedChunks(t, bc.name, url, &b) != 2 {
		t.Fatalf("a stream that failed after two chunks left %d chunks staged, want 2", stagedChunks(t, bc.name, url, &b))
	}
	called := false
	if err := b.StreamSnapshot(ctx, 11, eventTime(11), func(io.Writer) error { called = true; return nil }); !errors.Is(err, ErrSequence) || called {
		t.Fatalf("a stream ahead of the record: %v (write called: %v), want ErrSequence before writing", err, called)
	}
	data := streamData(100)
	must(t, b.StreamSnapshot(ctx, 8, eventTime(8), writeIn(data, nil)))
	if l := load(t, b); !bytes.Equal(l.snap.Data, data) || len(l.recs) != 2 {
		t.Fatalf("the stream after a failed one loaded %d bytes and %d events", len(l.snap.Data), len(l.recs))
	}
	if bc.durable && stagedChunks(t, bc.name, url, &b) != 1 {
		t.Fatalf("the stream after a failed one left %d chunks, want its own 1", stagedChunks(t, bc.name, url, &b))
	}
}

// testStreamSnapshotChunkLost deletes a chunk of a streamed snapshot: Load
// refuses the record as corrupt.
func testStreamSnapshotChunkLost(t *testing.T, bc backendCase) {
	if !bc.durable {
		t.Skip("the memory record stores no chunks")
	}
	ctx := ctxT(t)
	url := bc.newURL(t)
	b := openURL(t, url)
	must(t, b.Append(ctx, records(1, 3)))
	must(t, b.StreamSnapshot(ctx, 3, eventTime(3), writeIn(streamData(3*ChunkSize), nil)))
	must(t, b.Close())
	rawExec(t, bc.name, url, "DELETE FROM snapshot_chunks WHERE n = 1")
	b = openURL(t, url)
	err := b.Load(ctx, func(*Snapshot) error { return nil }, func(Record) error { return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load of a snapshot missing a chunk = %v, want ErrCorrupt", err)
	}
}

// stagedChunks closes *b (a SQLite record is locked while open), counts the
// rows of snapshot_chunks at url, and opens *b again.
func stagedChunks(t *testing.T, kind, url string, b *Backend) int {
	t.Helper()
	must(t, (*b).Close())
	var n int
	rawQuery(t, kind, url, "SELECT COUNT(*) FROM snapshot_chunks", &n)
	*b = openURL(t, url)
	return n
}

// rawExec runs q on the database at url, outside any backend.
func rawExec(t *testing.T, kind, url, q string) {
	t.Helper()
	rawQuery(t, kind, url, q, nil)
}

// rawQuery runs q on the database at url and scans its one row into dst
// (nil: q returns no row).
func rawQuery(t *testing.T, kind, url, q string, dst any) {
	t.Helper()
	ctx := context.Background()
	if kind == "sqlite" {
		db, err := sql.Open("sqlite", "file:"+filepath.Clean(strings.TrimPrefix(url, "sqlite:")))
		must(t, err)
		defer db.Close()
		if dst == nil {
			_, err = db.ExecContext(ctx, q)
		} else {
			err = db.QueryRowContext(ctx, q).Scan(dst)
		}
		must(t, err)
		return
	}
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(context.Background())
	if dst == nil {
		_, err = conn.Exec(ctx, q)
	} else {
		err = conn.QueryRow(ctx, q).Scan(dst)
	}
	must(t, err)
}
