package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestDSNGivesEachTestItsOwnEmptyDatabase(t *testing.T) {
	a, b := DSN(t), DSN(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	ctx := context.Background()
	for _, dsn := range []string{a, b} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var tables int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables)
		conn.Close(ctx)
		if err != nil || tables != 0 {
			t.Fatalf("%s: %d tables, err %v; want a fresh empty database", dsn, tables, err)
		}
	}
}

func TestShellQuote(t *testing.T) {
	got := shellQuote([]string{"a b", "it's"})
	if want := `'a b' 'it'\''s'`; got != want {
		t.Fatalf("shellQuote = %s, want %s", got, want)
	}
}

// outcome records how DSN ended a test instead of ending it.
type outcome struct {
	testing.TB
	fatal, skip string
}

func (o *outcome) Helper()                           {}
func (o *outcome) Fatalf(format string, args ...any) { o.fatal = fmt.Sprintf(format, args...) }
func (o *outcome) Skipf(format string, args ...any)  { o.skip = fmt.Sprintf(format, args...) }

// Without PostgreSQL a test is skipped, unless PostgreSQL is required: then
// it fails.
func TestNoPostgres(t *testing.T) {
	serverGlob = filepath.Join(t.TempDir(), "*", "initdb")
	defer func() { serverGlob = "/usr/lib/postgresql/*/bin/initdb" }()
	t.Setenv(EnvDSN, "")
	for _, require := range []string{"", "1"} {
		t.Setenv(EnvRequire, require)
		o := &outcome{TB: t}
		if dsn := DSN(o); dsn != "" {
			t.Fatalf("DSN without PostgreSQL = %q", dsn)
		}
		if require == "1" && (o.fatal == "" || o.skip != "") || require == "" && (o.skip == "" || o.fatal != "") {
			t.Fatalf("%s=%q: fatal %q, skip %q", EnvRequire, require, o.fatal, o.skip)
		}
	}
}
