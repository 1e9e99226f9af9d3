package eventlog

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestParseURL(t *testing.T) {
	cases := []struct {
		url    string
		kind   backendKind
		target string
		err    bool
	}{
		{url: "", kind: kindMemory},
		{url: "sqlite:/var/lib/governor/events.db", kind: kindSQLite, target: "/var/lib/governor/events.db"},
		{url: "sqlite:events.db", kind: kindSQLite, target: "events.db"},
		{url: "postgres://u@h/db", kind: kindPostgres, target: "postgres://u@h/db"},
		{url: "postgresql://u@h/db?sslmode=disable", kind: kindPostgres, target: "postgresql://u@h/db?sslmode=disable"},
		{url: "sqlite:", err: true},
		{url: "sqlite://host/path", err: true},
		{url: "mysql://u:pw@h/db", err: true},
		{url: "/var/lib/events.db", err: true},
		{url: "memory", err: true},
	}
	for _, c := range cases {
		kind, target, err := parseURL(c.url)
		if c.err {
			if !errors.Is(err, ErrURL) || !strings.Contains(err.Error(), `"sqlite:PATH"`) {
				t.Errorf("parseURL(%q) = %v, want ErrURL naming the accepted forms", c.url, err)
			}
			continue
		}
		if err != nil || kind != c.kind || target != c.target {
			t.Errorf("parseURL(%q) = %v %q %v, want %v %q", c.url, kind, target, err, c.kind, c.target)
		}
	}
}

func TestOpenRefusesAnUnknownURLWithoutItsPassword(t *testing.T) {
	_, err := Open(ctxT(t), "mysql://u:hunter2@h/db", quiet)
	if !errors.Is(err, ErrURL) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Open = %v, want ErrURL without the password", err)
	}
}

func TestOpenInMemoryWarnsLoudly(t *testing.T) {
	var logs bytes.Buffer
	b, err := Open(ctxT(t), "", slog.New(slog.NewTextHandler(&logs, nil)))
	must(t, err)
	defer b.Close()
	if _, ok := b.(*Memory); !ok || !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "NOTHING IS DURABLE") {
		t.Fatalf("Open(\"\") gave %T and logged %q; want a memory backend and a warning", b, logs.String())
	}
}

func TestSQLiteSettings(t *testing.T) {
	b := openURL(t, backendCases[1].newURL(t)).(*SQLite)
	var mode, locking string
	var sync int
	must(t, b.db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	must(t, b.db.QueryRow("PRAGMA synchronous").Scan(&sync))
	must(t, b.db.QueryRow("PRAGMA locking_mode").Scan(&locking))
	if mode != "wal" || sync != 2 || locking != "exclusive" {
		t.Fatalf("journal_mode %s, synchronous %d, locking_mode %s; want wal, 2 (FULL), exclusive", mode, sync, locking)
	}
}

func TestSQLiteRefusesASecondOpener(t *testing.T) {
	t.Parallel()
	url := backendCases[1].newURL(t)
	openURL(t, url)
	_, err := Open(ctxT(t), url, quiet)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second Open of one file = %v, want it refused as in use", err)
	}
}

func TestPostgresRefusesASecondOpener(t *testing.T) {
	t.Parallel()
	url := backendCases[2].newURL(t)
	openURL(t, url)
	_, err := Open(ctxT(t), url, quiet)
	if err == nil || !strings.Contains(err.Error(), "in use by another governord") {
		t.Fatalf("second Open of one database = %v, want it refused as in use", err)
	}
}

// TestPostgresReopensAtOnce: Close releases the advisory lock before it
// returns, so an Open right after it finds the database free, 100 times in
// a row.
func TestPostgresReopensAtOnce(t *testing.T) {
	t.Parallel()
	url := backendCases[2].newURL(t)
	for i := range 100 {
		b, err := Open(ctxT(t), url, quiet)
		if err != nil {
			t.Fatalf("open %d right after a close: %v", i, err)
		}
		if err := b.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
}

// A database that a newer binary migrated is refused, naming both versions.
func TestSchemaTooNew(t *testing.T) {
	for _, bc := range backendCases {
		if !bc.durable {
			continue
		}
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			ctx := ctxT(t)
			url := bc.newURL(t)
			b, err := Open(ctx, url, quiet)
			must(t, err)
			must(t, b.Close())
			bumpSchema(t, bc.name, url, 99)
			_, err = Open(ctx, url, quiet)
			var tooNew *SchemaTooNewError
			if !errors.As(err, &tooNew) || !errors.Is(err, ErrSchemaTooNew) || tooNew.Have != 99 || tooNew.Know != 2 {
				t.Fatalf("Open of a newer schema = %v, want SchemaTooNewError 99 > 2", err)
			}
			msg := err.Error()
			for _, want := range []string{"written by a newer governord", "schema version 99", "knows up to 2", "upgrade governord"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

// bumpSchema records schema version v as applied, as a newer binary would.
func bumpSchema(t *testing.T, kind, url string, v int64) {
	const q = "INSERT INTO " + versionTable + " (version_id, is_applied) VALUES "
	ctx := ctxT(t)
	if kind == "sqlite" {
		db, err := sql.Open("sqlite", "file:"+filepath.Clean(strings.TrimPrefix(url, "sqlite:")))
		must(t, err)
		defer db.Close()
		_, err = db.ExecContext(ctx, q+"(?, 1)", v)
		must(t, err)
		return
	}
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, q+"($1, true)", v)
	must(t, err)
}
