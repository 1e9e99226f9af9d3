package eventlog

import (
	"context"
	"io"

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
		st := pgStager{p}
		err := st.tx(ctx, func(tx pgx.Tx) error {
			return pgPublish(ctx, tx, snap.Seq, snap.Time, snap.Data, 0, 0)
		})
		if err == nil {
			err = prune(ctx, st, snap.Seq)
		}
		return p.wrap("save snapshot to", err)
	})
}

// pgPublish runs the statements that publish a snapshot in tx.
func pgPublish(ctx context.Context, tx pgx.Tx, seq uint64, time int64, data []byte, id int64, chunks int) error {
	for _, st := range publishing(seq, time, data, id, chunks) {
		if _, err := tx.Exec(ctx, dollars(st.q), st.args...); err != nil {
			return err
		}
	}
	return nil
}

// StreamSnapshot implements Backend.
func (p *Postgres) StreamSnapshot(ctx context.Context, seq uint64, time int64, write func(io.Writer) error) error {
	return p.wrap("save snapshot to", streamSnapshot(ctx, &p.ledger, pgStager{p}, seq, time, write))
}

// pgStager streams snapshots into a PostgreSQL record, each step on the
// connection that holds the advisory lock, as every write is.
type pgStager struct{ p *Postgres }

// tx runs fn in a transaction on the locked connection.
func (st pgStager) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	st.p.wmu.Lock()
	defer st.p.wmu.Unlock()
	return pgx.BeginFunc(ctx, st.p.lock, fn)
}

func (st pgStager) begin(ctx context.Context) (id int64, err error) {
	err = st.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlDropStaged); err != nil {
			return err
		}
		return tx.QueryRow(ctx, sqlNextChunkID).Scan(&id)
	})
	return id, err
}

func (st pgStager) stage(ctx context.Context, id int64, n int, data []byte) error {
	return st.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, dollars(sqlStageChunk), id, n, data)
		return err
	})
}

func (st pgStager) drop(ctx context.Context, seq uint64) (n int64, err error) {
	err = st.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, dollars(sqlPrune), int64(seq), pruneStep)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

func (st pgStager) publish(ctx context.Context, seq uint64, time int64, id int64, chunks int) error {
	return st.tx(ctx, func(tx pgx.Tx) error { return pgPublish(ctx, tx, seq, time, nil, id, chunks) })
}

// Load implements Backend, in one read-only REPEATABLE READ transaction.
func (p *Postgres) Load(ctx context.Context, restore func(*Snapshot) error, replay func(Record) error) error {
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	return pgx.BeginTxFunc(ctx, p.pool, opts, func(tx pgx.Tx) error {
		var r reader
		snap, err := newestSnapshot(&r, tx.QueryRow(ctx, sqlNewest).Scan, pgx.ErrNoRows, func(id, chunks int64) ([]byte, error) {
			return pgChunks(ctx, tx, id, chunks)
		})
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
		return replayRows(&r, rows, replay, func(err error) error { return p.wrap("load", err) })
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

// pgChunks reads the data of the snapshot stored as chunks of id.
func pgChunks(ctx context.Context, tx pgx.Tx, id, chunks int64) ([]byte, error) {
	rows, err := tx.Query(ctx, dollars(sqlReadChunks), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return joinChunks(chunks, rows)
}
