package eventlog

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// postgresLockKey is the session advisory lock a Postgres backend holds for
// as long as it is open, so that two governords never write one database.
// Advisory locks are per database: other databases on the server are free.
const postgresLockKey int64 = 0x676f7665726e6f72 // "governor"

// unlockTimeout bounds the statement that releases the advisory lock at
// Close.
const unlockTimeout = 5 * time.Second

// lockWait is how long Open waits for the advisory lock before it says the
// database is in use: the connection of a governord that was killed holds
// it until the server has noticed the disconnect and finished what that
// connection was writing.
const lockWait = 3 * time.Second

// Postgres is the Backend for fleets: a PostgreSQL database reached with
// pgx. Each Append is one INSERT … SELECT FROM unnest statement, so one round
// trip and one transaction whatever the batch size. It holds a session
// advisory lock on a connection of its own while open, refusing a second
// writer, and writes through that connection alone: a killed governord's
// last write commits before its lock is free, so the next holder loads it,
// and never after. Safe for concurrent use.
type Postgres struct {
	where  string // the URL without its password
	pool   *pgxpool.Pool
	wmu    sync.Mutex    // guards the use of lock by Append, SaveSnapshot and Close
	lock   *pgxpool.Conn // holds the advisory lock until Close; every write goes through it
	locked bool          // lock holds the advisory lock: Close unlocks it
	ledger ledger
}

var _ Backend = (*Postgres)(nil)

func openPostgres(ctx context.Context, url string, log *slog.Logger) (*Postgres, error) {
	p := &Postgres{where: redact(url)}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, p.wrap("open", err)
	}
	cfg.AfterConnect = requireSynchronousCommit
	if p.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, p.wrap("open", err)
	}
	if err := p.init(ctx, log); err != nil {
		p.Close()
		return nil, p.wrap("open", err)
	}
	log.Info("event log opened", "backend", "postgres", "url", p.where)
	return p, nil
}

func (p *Postgres) init(ctx context.Context, log *slog.Logger) error {
	var err error
	if p.lock, err = p.pool.Acquire(ctx); err != nil {
		return err
	}
	if err := p.takeLock(ctx); err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(p.pool)
	err = migrate(ctx, db, goose.DialectPostgres, "postgres", p.where, log)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	var maxEvent, maxSnap int64
	if err := p.pool.QueryRow(ctx, endsQuery).Scan(&maxEvent, &maxSnap); err != nil {
		return err
	}
	return p.ledger.start(maxEvent, maxSnap)
}

// takeLock takes the advisory lock on p.lock, trying for lockWait.
func (p *Postgres) takeLock(ctx context.Context) error {
	give := time.Now().Add(lockWait)
	for {
		var got bool
		if err := p.lock.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", postgresLockKey).Scan(&got); err != nil {
			return err
		}
		if got {
			p.locked = true
			return nil
		}
		if time.Now().After(give) {
			return fmt.Errorf("the database is in use by another governord (its advisory lock is held after %s)", lockWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// requireSynchronousCommit turns synchronous_commit back on for a session
// whose server or role turned it off: without it a commit can be reported
// and then lost in a crash of the server.
func requireSynchronousCommit(ctx context.Context, conn *pgx.Conn) error {
	var mode string
	if err := conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&mode); err != nil {
		return err
	}
	if mode != "off" {
		return nil
	}
	_, err := conn.Exec(ctx, "SET synchronous_commit = on")
	return err
}

// wrap adds the operation and the database to err.
func (p *Postgres) wrap(op string, err error) error { return wrapStore(op, p.where, err) }
