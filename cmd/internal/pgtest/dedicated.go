package pgtest

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// Dedicated is a PostgreSQL server of one test's own, which the test may
// kill and start again to see what its clients do when the database goes
// away. Unlike DSN it never uses GOVERNOR_TEST_DSN: a shared server must not
// be stopped. Its methods are safe for concurrent use.
type Dedicated struct {
	srv  *server
	port int

	mu      sync.Mutex // guards running
	running bool
}

// StartDedicated starts a throwaway PostgreSQL server for t alone, on a free
// loopback port, and stops it when t ends. Without server binaries t is
// skipped, or fails when GOVERNOR_REQUIRE_POSTGRES=1.
func StartDedicated(t testing.TB) *Dedicated {
	t.Helper()
	bin := serverBin()
	if bin == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: PostgreSQL is required (%s=1) but no server binaries are installed", EnvRequire)
		}
		t.Skip("pgtest: a dedicated PostgreSQL needs the server binaries under /usr/lib/postgresql")
	}
	srv, err := startServer(bin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u, err := url.Parse(srv.dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", errors.Join(err, srv.stop()))
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("pgtest: the server's URL %s has no port: %v", srv.dsn, errors.Join(err, srv.stop()))
	}
	d := &Dedicated{srv: srv, port: port, running: true}
	t.Cleanup(func() {
		if err := d.stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return d
}

// DSN is the URL of the server's database "postgres".
func (d *Dedicated) DSN() string { return d.srv.dsn }

// Kill stops the server the way a crash would (pg_ctl stop -m immediate):
// connections drop at once and nothing is shut down cleanly.
func (d *Dedicated) Kill() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	out, err := d.srv.asPostgres(filepath.Join(d.srv.bin, "pg_ctl"), "-D", d.srv.data(), "-m", "immediate", "-w", "-t", "60", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop -m immediate: %w\n%s", err, out)
	}
	d.running = false
	return nil
}

// Start starts a killed server again, on the same port, after crash
// recovery.
func (d *Dedicated) Start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.srv.start(d.port); err != nil {
		return err
	}
	d.running = true
	return nil
}

// stop stops a running server and removes its files.
func (d *Dedicated) stop() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running {
		d.running = false
		return d.srv.stop()
	}
	if d.srv.watchdog != nil {
		d.srv.watchdog.Process.Kill()
		d.srv.watchdog.Wait()
	}
	return os.RemoveAll(d.srv.dir)
}
