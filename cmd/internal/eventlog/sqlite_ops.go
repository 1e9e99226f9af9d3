package eventlog

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// Append implements Backend: one transaction of multi-row INSERTs.
func (s *SQLite) Append(ctx context.Context, recs []Record) error {
	return s.ledger.append(recs, func() error {
		// Prepare first: inside the transaction its one connection is busy.
		full, err := s.insertStmt(ctx, min(len(recs), sqliteChunk))
		if err != nil {
			return s.wrap("append to", err)
		}
		tail := full
		if n := len(recs) % sqliteChunk; n != 0 && len(recs) > sqliteChunk {
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
		return s.wrap("save snapshot to", s.inTx(ctx, func(tx *sql.Tx) error {
			seq := int64(snap.Seq)
			if _, err := tx.ExecContext(ctx, "DELETE FROM snapshots WHERE seq <= ?", seq); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO snapshots (seq, time, data) VALUES (?, ?, ?)", seq, snap.Time, nonNil(snap.Data)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "DELETE FROM events WHERE seq <= ?", seq)
			return err
		}))
	})
}

// Load implements Backend, in one read transaction.
func (s *SQLite) Load(ctx context.Context, restore func(*Snapshot) error, replay func(Record) error) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var r reader
		var seq, time int64
		var data []byte
		err := tx.QueryRowContext(ctx, "SELECT seq, time, data FROM snapshots ORDER BY seq DESC LIMIT 1").Scan(&seq, &time, &data)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return s.wrap("load", err)
		}
		snap, err := r.snapshot(err == nil, seq, time, data)
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
		for rows.Next() {
			if err := rows.Scan(&seq, &time, &data); err != nil {
				return s.wrap("load", err)
			}
			rec, err := r.record(seq, time, data)
			if err != nil {
				return s.wrap("load", err)
			}
			if err := replay(rec); err != nil {
				return err
			}
		}
		return s.wrap("load", rows.Err())
	})
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
