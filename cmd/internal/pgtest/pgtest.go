package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The environment variables DSN reads.
const (
	EnvDSN     = "GOVERNOR_TEST_DSN"
	EnvRequire = "GOVERNOR_REQUIRE_POSTGRES"
)

var (
	mu      sync.Mutex // guards the variables below
	inMain  bool       // Main is running the tests
	started *server    // the throwaway server, once started
	failure error      // why it could not start, once it could not
)

// Main runs m's tests and then stops the throwaway server if one was
// started. Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	mu.Lock()
	inMain = true
	mu.Unlock()
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if started != nil {
		if err := started.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
		started = nil
	}
	return code
}

// DSN returns the URL of a new empty database that is dropped when t ends,
// or skips t (fails it when GOVERNOR_REQUIRE_POSTGRES=1) if there is no
// PostgreSQL to use.
func DSN(t testing.TB) string {
	t.Helper()
	admin, err := adminDSN()
	switch {
	case err != nil:
		t.Fatalf("pgtest: %v", err)
	case admin == "" && os.Getenv(EnvRequire) == "1":
		t.Fatalf("pgtest: PostgreSQL is required (%s=1) but %s is unset and no server binaries match %s", EnvRequire, EnvDSN, serverGlob)
	case admin == "":
		t.Skipf("pgtest: no PostgreSQL: set %s or install the server binaries", EnvDSN)
	default:
		dsn, err := createDatabase(t, admin)
		if err == nil {
			return dsn
		}
		t.Fatalf("pgtest: %v", err)
	}
	return ""
}

// adminDSN returns the URL to create databases through, "" if there is no
// PostgreSQL.
func adminDSN() (string, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return dsn, nil
	}
	bin := serverBin()
	if bin == "" {
		return "", nil
	}
	mu.Lock()
	defer mu.Unlock()
	if !inMain {
		return "", fmt.Errorf("call pgtest.Main from TestMain so that the throwaway server is stopped")
	}
	if started == nil && failure == nil {
		started, failure = startServer(bin)
	}
	if failure != nil {
		return "", failure
	}
	return started.dsn, nil
}

// createDatabase creates a database with a random name through admin and
// returns its URL; t's cleanup drops it.
func createDatabase(t testing.TB, admin string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("%s must be a postgres:// URL", EnvDSN)
	}
	var b [8]byte
	rand.Read(b[:])
	name := "governor_test_" + hex.EncodeToString(b[:])
	if err := adminExec(admin, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	t.Cleanup(func() {
		if err := adminExec(admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String(), nil
}

func adminExec(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
