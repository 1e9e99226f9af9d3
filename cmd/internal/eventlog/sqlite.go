package eventlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The SQLite driver is modernc.org/sqlite (pure Go), chosen by measurement
// against the cgo driver github.com/mattn/go-sqlite3 on the 2-core build
// machine: WAL, synchronous=FULL, 100-byte events, one multi-row INSERT per
// transaction. A commit of 1 or 16 events cost the same with either (about
// 0.2 ms, 4,700 and 65,000 events/s: the fsync is the cost); at 512 events
// the cgo driver was about 1.25x faster (1.8 against 2.2 µs an event). Group
// commit spends its time in the fsync, so the pure-Go driver costs little
// and keeps the build free of cgo.

// sqliteChunk is how many rows one INSERT carries: 3 parameters a row stays
// far below SQLite's limit of 32766 parameters.
const sqliteChunk = 256

// sqliteBusyMillis is how long a statement waits for a lock held by another
// connection before it fails with SQLITE_BUSY.
const sqliteBusyMillis = 5000

// SQLite is the embedded Backend: one database file and its write-ahead log,
// synchronous=FULL so a commit is on disk when it returns, locked EXCLUSIVE so
// no other process (or second Open) can use the file while it is open. Safe
// for concurrent use; its statements run one at a time on its one
// connection.
type SQLite struct {
	path   string
	db     *sql.DB
	ledger ledger

	mu    sync.Mutex        // guards the field below
	stmts map[int]*sql.Stmt // prepared INSERTs by row count
}

var _ Backend = (*SQLite)(nil)

func openSQLite(ctx context.Context, path string, log *slog.Logger) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs))
	if err != nil {
		return nil, fmt.Errorf("open event log %s: %w", abs, err)
	}
	// One connection: EXCLUSIVE locking would make a second one wait, and
	// SQLite has one writer at a time anyway. It is never closed while open.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	s := &SQLite{path: abs, db: db, stmts: make(map[int]*sql.Stmt)}
	if err := s.init(ctx, log); err != nil {
		db.Close()
		return nil, err
	}
	log.Info("event log opened", "backend", "sqlite", "path", abs)
	return s, nil
}

// sqliteDSN is the driver's name for path with the pragmas every connection
// needs.
func sqliteDSN(path string) string {
	q := neturl.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyMillis))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	return "file:" + (&neturl.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

func (s *SQLite) init(ctx context.Context, log *slog.Logger) error {
	if err := s.checkPragmas(ctx); err != nil {
		return s.wrap("open", err)
	}
	if err := migrate(ctx, s.db, goose.DialectSQLite3, "sqlite", s.path, log); err != nil {
		return s.wrap("open", err)
	}
	var maxEvent, maxSnap int64
	if err := s.db.QueryRowContext(ctx, endsQuery).Scan(&maxEvent, &maxSnap); err != nil {
		return s.wrap("open", err)
	}
	return s.wrap("open", s.ledger.start(maxEvent, maxSnap))
}

// checkPragmas makes sure the settings durability rests on took effect.
func (s *SQLite) checkPragmas(ctx context.Context) error {
	var mode string
	var sync int
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") || sync != 2 {
		return fmt.Errorf("journal_mode is %q and synchronous is %d; want wal and 2 (FULL)", mode, sync)
	}
	return nil
}

// wrap adds the operation and the file to err, and says plainly when the
// file is held by another process.
func (s *SQLite) wrap(op string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
		return fmt.Errorf("%s event log %s: the file is in use by another process (is another governord running?): %w", op, s.path, err)
	}
	return wrapStore(op, s.path, err)
}
