package eventlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ChunkSize is the most bytes one stored chunk of a streamed snapshot holds.
const ChunkSize = 256 << 10

// The statements that store a snapshot in chunks, the same on SQLite and
// PostgreSQL but for their placeholders (written here as ?). A snapshot
// row names its chunks by chunk_id and their count; staged chunks that no
// row names are left by a snapshot that never finished.
const (
	sqlDropStaged  = "DELETE FROM snapshot_chunks WHERE id NOT IN (SELECT chunk_id FROM snapshots)"
	sqlNextChunkID = "SELECT COALESCE(MAX(chunk_id), 0) + 1 FROM snapshots"
	sqlStageChunk  = "INSERT INTO snapshot_chunks (id, n, data) VALUES (?, ?, ?)"
	sqlDropCovered = "DELETE FROM snapshot_chunks WHERE id IN (SELECT chunk_id FROM snapshots WHERE seq <= ?)"
	sqlPublish     = "INSERT INTO snapshots (seq, time, data, chunk_id, chunks) VALUES (?, ?, ?, ?, ?)"
	sqlReadChunks  = "SELECT n, data FROM snapshot_chunks WHERE id = ? ORDER BY n"
	sqlNewest      = "SELECT seq, time, data, chunk_id, chunks FROM snapshots ORDER BY seq DESC LIMIT 1"
	sqlPrune       = "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE seq <= ? ORDER BY seq LIMIT ?)"
)

// pruneStep is the most events one transaction of a prune deletes.
const pruneStep = 1024

// dollars rewrites a statement's ? placeholders as PostgreSQL's $1, $2, ….
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for _, part := range strings.SplitAfter(q, "?") {
		if strings.HasSuffix(part, "?") {
			n++
			part = part[:len(part)-1] + "$" + strconv.Itoa(n)
		}
		b.WriteString(part)
	}
	return b.String()
}

// stager is what a SQL backend does to stream a snapshot, each step a
// transaction of its own.
type stager interface {
	// begin drops the chunks a snapshot left unfinished and returns an
	// id no snapshot uses.
	begin(ctx context.Context) (int64, error)
	// stage stores chunk n of id, where Load does not see it.
	stage(ctx context.Context, id int64, n int, data []byte) error
	// publish makes the chunks of id the snapshot at seq, and deletes the
	// older snapshots and their chunks; prune deletes the events it covers.
	publish(ctx context.Context, seq uint64, time int64, id int64, chunks int) error
	// drop deletes the oldest pruneStep of the events at or below seq in a
	// transaction of its own and returns how many it deleted.
	drop(ctx context.Context, seq uint64) (int64, error)
}

// streamSnapshot is StreamSnapshot for a SQL backend: chunks of ChunkSize
// bytes are staged as write produces them, then published in one
// transaction, then the events it covers are pruned. Between two chunks,
// and two steps of the prune, the record is free for appends.
func streamSnapshot(ctx context.Context, l *ledger, st stager, seq uint64, time int64, write func(io.Writer) error) error {
	return l.snapshot(seq, func() error {
		id, err := st.begin(ctx)
		if err != nil {
			return err
		}
		cw := &chunker{stage: func(n int, data []byte) error { return st.stage(ctx, id, n, data) }, buf: make([]byte, 0, ChunkSize)}
		if err := write(cw); err != nil {
			return err
		}
		if err := cw.flush(); err != nil {
			return err
		}
		if err := st.publish(ctx, seq, time, id, cw.n); err != nil {
			return err
		}
		return prune(ctx, st, seq)
	})
}

// prune deletes the events at or below seq, which a published snapshot
// covers, the oldest pruneStep of them per transaction, so that appends
// run between two steps: one DELETE of them all held the only writer of a
// SQLite record for as long as 100,000 events took to delete (0.2 to 0.7
// s), and every tenant's commit waited. Events a prune that stopped midway
// left lie at or below the newest snapshot, so Load skips them, and the
// next prune deletes them.
func prune(ctx context.Context, st stager, seq uint64) error {
	for {
		n, err := st.drop(ctx, seq)
		if err != nil {
			return fmt.Errorf("delete the events the snapshot at %d covers: %w", seq, err)
		}
		if n < pruneStep {
			return nil
		}
	}
}

// chunker cuts what is written to it into chunks of ChunkSize bytes and
// hands each to stage.
type chunker struct {
	stage func(n int, data []byte) error
	buf   []byte
	n     int // chunks staged
}

func (c *chunker) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		k := min(len(p), ChunkSize-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p, written = p[k:], written+k
		if len(c.buf) == ChunkSize {
			if err := c.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (c *chunker) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	if err := c.stage(c.n, c.buf); err != nil {
		return err
	}
	c.n++
	c.buf = c.buf[:0]
	return nil
}

// sqlRows is rows of a query, as database/sql and pgx both give them.
type sqlRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// joinChunks reads a chunked snapshot's data from its rows, which must
// number its chunks 0 to chunks-1.
func joinChunks(chunks int64, rows sqlRows) ([]byte, error) {
	var out []byte
	var i int64
	for ; rows.Next(); i++ {
		var n int64
		var data []byte
		if err := rows.Scan(&n, &data); err != nil {
			return nil, err
		}
		if n != i {
			return nil, corruptError("snapshot chunk %d found where %d comes next", n, i)
		}
		out = append(out, data...)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if i != chunks {
		return nil, corruptError("snapshot has %d of its %d chunks", i, chunks)
	}
	return nonNil(out), nil
}

// newestSnapshot is the start of Load on a SQL backend: it reads the row of
// sqlNewest through scan (noRows is the driver's error for none), joins the
// chunks it names through readChunks, and checks it with r.
func newestSnapshot(r *reader, scan func(dest ...any) error, noRows error, readChunks func(id, chunks int64) ([]byte, error)) (*Snapshot, error) {
	var seq, time, id, chunks int64
	var data []byte
	err := scan(&seq, &time, &data, &id, &chunks)
	if err != nil && !errors.Is(err, noRows) {
		return nil, err
	}
	found := err == nil
	if found && chunks > 0 {
		if data, err = readChunks(id, chunks); err != nil {
			return nil, err
		}
	}
	return r.snapshot(found, seq, time, data)
}

// replayRows is the end of Load on a SQL backend: it reads the rows of the
// events after the snapshot (seq, time, data), checks each with r and hands
// it to replay. An error from replay is returned as it is; one from the rows
// or from r goes through wrap.
func replayRows(r *reader, rows sqlRows, replay func(Record) error, wrap func(error) error) error {
	var seq, time int64
	var data []byte
	for rows.Next() {
		if err := rows.Scan(&seq, &time, &data); err != nil {
			return wrap(err)
		}
		rec, err := r.record(seq, time, data)
		if err != nil {
			return wrap(err)
		}
		if err := replay(rec); err != nil {
			return err
		}
	}
	return wrap(rows.Err())
}

// publishing is the statements, in order, that publish a snapshot at seq:
// its data inline (chunks 0) or its chunks named by id. They delete the
// older snapshots with their chunks; prune then deletes the events it
// covers.
func publishing(seq uint64, time int64, data []byte, id int64, chunks int) []statement {
	return []statement{
		{sqlDropCovered, []any{int64(seq)}},
		{"DELETE FROM snapshots WHERE seq <= ?", []any{int64(seq)}},
		{sqlPublish, []any{int64(seq), time, nonNil(data), id, chunks}},
	}
}

// statement is one SQL statement and its arguments.
type statement struct {
	q    string
	args []any
}
