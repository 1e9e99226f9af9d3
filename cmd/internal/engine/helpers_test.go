package engine

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/testclock"
)

// newFakeClock returns a clock at the start of 2026 that the test moves.
func newFakeClock() *testclock.Clock {
	return testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// recorder keeps every event the engine emits. With recycle set it keeps a
// copy of each instead and gives the events themselves back to recycle
// every so many, as the record's writer does after a commit.
type recorder struct {
	events  []*Event
	audit   func(ev *Event)
	recycle *Engine
	every   int
	batch   []*Event
}

func (r *recorder) Emit(ev *Event) {
	kept := ev
	if r.recycle != nil {
		cp := *ev
		kept = &cp
		r.batch = append(r.batch, ev)
	}
	r.events = append(r.events, kept)
	if r.audit != nil {
		r.audit(kept)
	}
	if r.recycle != nil && len(r.batch) >= r.every {
		r.recycle.Recycle(r.batch)
		r.batch = r.batch[:0]
	}
}

// fixture is an engine with a fake clock and a recorder.
type fixture struct {
	t     testing.TB
	clock *testclock.Clock
	rec   *recorder
	e     *Engine
	n     int
}

func newFixture(t testing.TB) *fixture {
	f := &fixture{t: t, clock: newFakeClock(), rec: &recorder{}}
	f.e = New(Options{Clock: f.clock, Sink: f.rec})
	return f
}

func (f *fixture) sys() *Call { return &Call{} }

func token(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint("token-", i))) }

// tenant creates a tenant under the root with the given spec.
func (f *fixture) tenant(spec Spec) ID {
	f.t.Helper()
	inf, err := f.e.Create(f.sys(), RootID, spec)
	if err != nil {
		f.t.Fatalf("create tenant %q: %v", spec.Name, err)
	}
	return inf.ID
}

// session opens a session on scope with a TTL.
func (f *fixture) session(scope ID, ttl time.Duration) ID {
	f.t.Helper()
	f.n++
	inf, err := f.e.OpenSession(f.sys(), scope, ttl, token(f.n))
	if err != nil {
		f.t.Fatalf("open session: %v", err)
	}
	return inf.ID
}

func (f *fixture) create(sess, parent ID, spec Spec) ID {
	f.t.Helper()
	inf, err := f.e.Create(&Call{Session: sess}, parent, spec)
	if err != nil {
		f.t.Fatalf("create %q: %v", spec.Name, err)
	}
	return inf.ID
}

func (f *fixture) acquire(sess, node ID, class string) (LeaseInfo, *Waiter) {
	f.t.Helper()
	l, w, err := f.e.Acquire(&Call{Session: sess}, node, class, 0)
	if err != nil {
		f.t.Fatalf("acquire %s on %d: %v", class, node, err)
	}
	return l, w
}

func ptr(v int64) *int64 { return &v }

// loadedCut is what a governord loads from a record that ends with the last
// of evs (one cut short, as by a kill): the engine that replayed them all,
// and the engine restored from a snapshot of it, by how they were made.
func loadedCut(t *testing.T, clock Clock, evs []*Event) map[string]*Engine {
	t.Helper()
	replayed := New(Options{Clock: clock, Sink: &recorder{}})
	for _, ev := range evs {
		must(t, replayed.Replay(ev))
	}
	restored, err := Restore(Options{Clock: clock, Sink: &recorder{}}, replayed.Dump())
	must(t, err)
	return map[string]*Engine{"replayed": replayed, "restored": restored}
}
