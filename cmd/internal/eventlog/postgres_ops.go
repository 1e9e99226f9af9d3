package eventlog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Append implements Backend.
func (p *Postgres) Append(ctx context.Context, recs []Record) error {
	return p.ledger.append(recs, func() error {
		seqs := make([]int64, len(recs))
		times := make([]int64, len(recs))
		datas := make([][]byte, len(recs))
		for i, r := range recs {
			seqs[i], times[i], datas[i] = int64(r.Seq), r.Time, nonNil(r.Data)
		}
		p.wmu.Lock()
		defer p.wmu.Unlock()
		_, err := p.lock.Exec(ctx, `INSERT INTO events (seq, time, data)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[])`, seqs, times, datas)
		return p.wrap("append to", err)
	})
}

// SaveSnapshot implements Backend.
func (p *Postgres) SaveSnapshot(ctx context.Context, snap Snapshot) error {
	return p.ledger.snapshot(snap.Seq, func() error {
		p.wmu.Lock()
		defer p.wmu.Unlock()
		return p.wrap("save snapshot to", pgx.BeginFunc(ctx, p.lock, func(tx pgx.Tx) error {
			seq := int64(snap.Seq)
			if _, err := tx.Exec(ctx, "DELETE FROM snapshots WHERE seq <= $1", seq); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "INSERT INTO snapshots (seq, time, data) VALUES ($1, $2, $3)", seq, snap.Time, nonNil(snap.Data)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "DELETE FROM events WHERE seq <= $1", seq)
			return err
		}))
	})
}

// Load implements Backend, in one read-only REPEATABLE READ transaction.
func (p *Postgres) Load(ctx context.Context, restore func(*Snapshot) error, replay func(Record) error) error {
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	return pgx.BeginTxFunc(ctx, p.pool, opts, func(tx pgx.Tx) error {
		var r reader
		var seq, time int64
		var data []byte
		err := tx.QueryRow(ctx, "SELECT seq, time, data FROM snapshots ORDER BY seq DESC LIMIT 1").Scan(&seq, &time, &data)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return p.wrap("load", err)
		}
		snap, err := r.snapshot(err == nil, seq, time, data)
		if err != nil {
			return p.wrap("load", err)
		}
		if err := restore(snap); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT seq, time, data FROM events WHERE seq > $1 ORDER BY seq", int64(r.next-1))
		if err != nil {
			return p.wrap("load", err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&seq, &time, &data); err != nil {
				return p.wrap("load", err)
			}
			rec, err := r.record(seq, time, data)
			if err != nil {
				return p.wrap("load", err)
			}
			if err := replay(rec); err != nil {
				return err
			}
		}
		return p.wrap("load", rows.Err())
	})
}

// Close implements Backend: it releases the advisory lock and every
// connection. The lock is released explicitly, before its connection
// closes, because the server frees a closed connection's locks only once
// it has noticed the disconnect: an immediate reopen would find it held.
func (p *Postgres) Close() error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	var err error
	if p.lock != nil {
		if p.locked {
			ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
			_, err = p.lock.Exec(ctx, "SELECT pg_advisory_unlock($1)", postgresLockKey)
			cancel()
			p.locked = false
		}
		p.lock.Release()
		p.lock = nil
	}
	if p.pool != nil {
		p.pool.Close()
	}
	return p.wrap("close", err)
}
