package durable

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"governor.dev/governor/internal/engine"
	"governor.dev/governor/internal/pgtest"
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

// clock is a settable clock shared by the stores of one test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

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
