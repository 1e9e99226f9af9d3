package durable

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/pgtest"
	"governor.dev/governor/cmd/internal/testclock"
)

// backends names each real record a test runs on.
func backends(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string {
			return "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
		},
		"postgres": func(t *testing.T) string { return pgtest.DSN(t) },
	}
}

// forEachBackend runs body once per backend, in parallel subtests.
func forEachBackend(t *testing.T, body func(t *testing.T, url string)) {
	for name, url := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body(t, url(t))
		})
	}
}

// newClock returns a clock the test moves, at noon on 1 March 2026.
func newClock() *testclock.Clock { return testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func open(t *testing.T, url string, clk engine.Clock, every uint64) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{URL: url, Clock: clk, SnapshotEvery: every, Logger: quiet()})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return s
}

// do runs one engine call the way the daemon does: room, apply, wait.
func do(t *testing.T, s *Store, c *engine.Call, op func(c *engine.Call) error) error {
	t.Helper()
	ctx := context.Background()
	if err := s.Room(ctx); err != nil {
		t.Fatal(err)
	}
	err := op(c)
	if werr := s.Wait(ctx, c.Seq); werr != nil {
		t.Fatalf("wait for %d: %v", c.Seq, werr)
	}
	return err
}

func tok(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint("durable-token-", i))) }
