package adaptive

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
)

// fixedClock is an engine clock that stands still: these tests are about
// reports, not about time.
type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func sqliteURL(t *testing.T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
}

// rig is a store whose committed events reach a controller, the way the
// daemon wires them.
type rig struct {
	t     testing.TB
	store *durable.Store
	ctl   *Controller
}

// openRig opens the record at url and a controller for classes on it.
func openRig(t testing.TB, url string, classes ...Class) *rig {
	t.Helper()
	var ctl atomic.Pointer[Controller]
	s, err := durable.Open(context.Background(), durable.Options{
		URL: url, Clock: fixedClock{}, Logger: quiet(),
		Committed: func(evs []*engine.Event) {
			if c := ctl.Load(); c != nil {
				c.Observe(evs)
			}
		},
	})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	r := &rig{t: t, store: s, ctl: New(s, classes, quiet())}
	ctl.Store(r.ctl)
	return r
}

// close stops the controller and closes the store.
func (r *rig) close() {
	r.t.Helper()
	r.ctl.Stop()
	if err := r.store.Close(context.Background()); err != nil {
		r.t.Fatalf("close the store: %v", err)
	}
}

// do runs one engine call the way the daemon does: room, apply, wait.
func (r *rig) do(c *engine.Call, op func(c *engine.Call) error) error {
	r.t.Helper()
	ctx := context.Background()
	if err := r.store.Room(ctx); err != nil {
		r.t.Fatal(err)
	}
	err := op(c)
	if werr := r.store.Wait(ctx, c.Seq); werr != nil {
		r.t.Fatalf("wait for %d: %v", c.Seq, werr)
	}
	return err
}

var tokens atomic.Int64

// session creates a tenant under the root and opens a session on it.
func (r *rig) session(tenant string) (engine.ID, engine.ID) {
	r.t.Helper()
	var node engine.NodeInfo
	must(r.t, r.do(&engine.Call{}, func(c *engine.Call) (err error) {
		node, _, err = r.store.Engine.Ensure(c, engine.RootID, engine.Spec{Name: tenant}, nil)
		return err
	}))
	tok := sha256.Sum256(fmt.Append(nil, "adaptive-token-", tokens.Add(1)))
	var s engine.SessionInfo
	must(r.t, r.do(&engine.Call{}, func(c *engine.Call) (err error) {
		s, err = r.store.Engine.OpenSession(c, node.ID, 0, tok)
		return err
	}))
	return node.ID, s.ID
}

// use acquires one lease of class on node and releases it with rep, waiting
// in the queue if it must.
func (r *rig) use(sess, node engine.ID, class string, rep engine.Report) {
	r.t.Helper()
	var lease engine.ID
	must(r.t, r.do(&engine.Call{Session: sess}, func(c *engine.Call) error {
		info, w, err := r.store.Engine.Acquire(c, node, class, 0)
		if err != nil || w == nil {
			lease = info.ID
			return err
		}
		g := <-w.C()
		c.Seq, lease = g.Seq, g.Lease.ID
		return g.Err
	}))
	must(r.t, r.do(&engine.Call{Session: sess}, func(c *engine.Call) error {
		_, err := r.store.Engine.Release(c, lease, rep)
		return err
	}))
}

// limit returns the root's limit on class, and whether there is one.
func (r *rig) limit(class string) (int64, bool) {
	r.t.Helper()
	root, _, _, err := r.store.Engine.Describe(&engine.Call{}, engine.RootID, nil)
	must(r.t, err)
	li := root.Limits[class]
	return li.Limit, li.Limited
}

// awaitSamples waits until the controller has taken in n reports of class:
// the Committed hook runs after the writer has woken the callers it served.
func (r *rig) awaitSamples(class string, n int) {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		got := r.observed(class)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("class %s: %d reports observed, want %d", class, got, n)
		}
	}
}

// observed returns how many reports of class wait for the next decision.
func (r *rig) observed(class string) int {
	w := &r.ctl.classes[class].win
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples
}

// limitSets reads back every limit change on record at url.
func limitSets(t *testing.T, url string) []*engine.Event {
	t.Helper()
	ctx := context.Background()
	b, err := eventlog.Open(ctx, url, quiet())
	must(t, err)
	defer b.Close()
	var out []*engine.Event
	must(t, b.Load(ctx, func(*eventlog.Snapshot) error { return nil }, func(rec eventlog.Record) error {
		ev, err := engine.DecodeEvent(rec.Data)
		if err == nil && ev.Kind == engine.KindLimitSet {
			out = append(out, ev)
		}
		return err
	}))
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
