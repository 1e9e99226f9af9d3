package governor

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// DB governs the transactions of a *sql.DB: each charges one ResourceSQL
// unit and holds one ClassDB lease, on the task in its context. It is safe
// for concurrent use, like the *sql.DB it wraps.
type DB struct {
	db *sql.DB
}

// NewDB wraps db. The SDK brings no driver: open db with the one you use.
func NewDB(db *sql.DB) *DB { return &DB{db: db} }

// DB returns the wrapped *sql.DB.
func (d *DB) DB() *sql.DB { return d.db }

// Tx runs fn in a transaction under a ClassDB lease, after charging one
// ResourceSQL unit. fn's error rolls back and is returned; otherwise the
// transaction commits. The lease is released with the transaction's
// latency.
func (d *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	if _, err := Consume(ctx, ResourceSQL, 1); err != nil {
		return err
	}
	l, err := Acquire(ctx, ClassDB)
	if err != nil {
		return err
	}
	start := time.Now()
	err = d.run(ctx, fn)
	return errors.Join(err, l.Release(Report{Latency: time.Since(start)}))
}

func (d *DB) run(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, ignoreDone(tx.Rollback()))
	}
	return tx.Commit()
}

// ignoreDone drops the error of a rollback after the transaction ended by
// itself (its context was cancelled).
func ignoreDone(err error) error {
	if errors.Is(err, sql.ErrTxDone) {
		return nil
	}
	return err
}
