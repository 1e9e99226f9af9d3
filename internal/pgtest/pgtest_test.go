package pgtest

import (
	"context"
	"os"
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
