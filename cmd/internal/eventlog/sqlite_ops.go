package eventlog

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"strings"
)

// Append implements Backend: one transaction of multi-row INSERTs. Up to
// sqliteChunk records take one INSERT, which SQLite runs as a transaction
// of its own (all or none, synced when it returns), without the BEGIN and
// COMMIT statements an explicit transaction costs.
func (s *SQLite) Append(ctx context.Context, recs []Record) error {
	return s.ledger.append(recs, func() error {
		// Prepare first: inside the transaction its one connection is busy.
		full, err := s.insertStmt(ctx, min(len(recs), sqliteChunk))
		if err != nil {
			return s.wrap("append to", err)
		}
		if len(recs) <= sqliteChunk {
			return s.wrap("append to", insert(ctx, full, recs))
		}
		tail := full
		if n := len(recs) % sqliteChunk; n != 0 {
			if tail, err = s.insertStmt(ctx, n); err != nil {
				return s.wrap("append to", err)
			}
		}
		return s.wrap("append to", s.inTx(ctx, func(tx *sql.Tx) error {
			for rest := recs; len(rest) > 0; {
				stmt := full
				if len(rest) < sqliteChunk {
					stmt = tail
				}
				n := min(len(rest), sqliteChunk)
				if err := insert(ctx, tx.StmtContext(ctx, stmt), rest[:n]); err != nil {
					return err
				}
				rest = rest[n:]
			}
			return nil
		}))
	})
}

// insert runs stmt, an INSERT of len(recs) rows.
func insert(ctx context.Context, stmt *sql.Stmt, recs []Record) error {
	args := make([]any, 0, 3*len(recs))
	for _, r := range recs {
		args = append(args, int64(r.Seq), r.Time, nonNil(r.Data))
	}
	_, err := stmt.ExecContext(ctx, args...)
	return err
}

// insertStmt returns the prepared INSERT of n rows, preparing it once.
func (s *SQLite) insertStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stmts[n]; ok {
		return st, nil
	}
	q := "INSERT INTO events (seq, time, data) VALUES " + strings.Repeat("(?, ?, ?), ", n-1) + "(?, ?, ?)"
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.stmts[n] = st
	return st, nil
}

// SaveSnapshot implements Backend.
func (s *SQLite) SaveSnapshot(ctx context.Context, snap Snapshot) error {
	return s.ledger.snapshot(snap.Seq, func() error {
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			return sqlitePublish(ctx, tx, snap.Seq, snap.Time, snap.Data, 0, 0)
		})
		if err == nil {
			err = prune(ctx, sqliteStager{s}, snap.Seq)
		}
		return s.wrap("save snapshot to", err)
	})
}

// sqlitePublish runs the statements that publish a snapshot in tx.
func sqlitePublish(ctx context.Context, tx *sql.Tx, seq uint64, time int64, data []byte, id int64, chunks int) error {
	for _, st := range publishing(seq, time, data, id, chunks) {
		if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
			return err
		}
	}
	return nil
}

// StreamSnapshot implements Backend.
func (s *SQLite) StreamSnapshot(ctx context.Context, seq uint64, time int64, write func(io.Writer) error) error {
	return s.wrap("save snapshot to", streamSnapshot(ctx, &s.ledger, sqliteStager{s}, seq, time, write))
}

// sqliteStager streams snapshots into a SQLite record.
type sqliteStager struct{ s *SQLite }

func (st sqliteStager) begin(ctx context.Context) (id int64, err error) {
	err = st.s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, sqlDropStaged); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, sqlNextChunkID).Scan(&id)
	})
	return id, err
}

func (st sqliteStager) stage(ctx context.Context, id int64, n int, data []byte) error {
	_, err := st.s.db.ExecContext(ctx, sqlStageChunk, id, n, data)
	return err
}

func (st sqliteStager) drop(ctx context.Context, seq uint64) (int64, error) {
	res, err := st.s.db.ExecContext(ctx, sqlPrune, int64(seq), pruneStep)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (st sqliteStager) publish(ctx context.Context, seq uint64, time int64, id int64, chunks int) error {
	return st.s.inTx(ctx, func(tx *sql.Tx) error { return sqlitePublish(ctx, tx, seq, time, nil, id, chunks) })
}

// Load implements Backend, in one read transaction.
func (s *SQLite) Load(ctx context.Context, restore func(*Snapshot) error, replay func(Record) error) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var r reader
		snap, err := newestSnapshot(&r, tx.QueryRowContext(ctx, sqlNewest).Scan, sql.ErrNoRows, func(id, chunks int64) ([]byte, error) {
			return sqliteChunks(ctx, tx, id, chunks)
		})
		if err != nil {
			return s.wrap("load", err)
		}
		if err := restore(snap); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT seq, time, data FROM events WHERE seq > ? ORDER BY seq", int64(r.next-1))
		if err != nil {
			return s.wrap("load", err)
		}
		defer rows.Close()
		return replayRows(&r, rows, replay, func(err error) error { return s.wrap("load", err) })
	})
}

// sqliteChunks reads the data of the snapshot stored as chunks of id.
func sqliteChunks(ctx context.Context, tx *sql.Tx, id, chunks int64) ([]byte, error) {
	rows, err := tx.QueryContext(ctx, sqlReadChunks, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return joinChunks(chunks, rows)
}

// Close implements Backend. It releases the file for other processes.
func (s *SQLite) Close() error {
	s.mu.Lock()
	for n, st := range s.stmts {
		st.Close()
		delete(s.stmts, n)
	}
	s.mu.Unlock()
	return s.db.Close()
}

// inTx runs fn in a transaction and commits it, or rolls it back if fn fails.
func (s *SQLite) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}
