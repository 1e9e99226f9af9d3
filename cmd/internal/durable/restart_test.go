package durable

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
)

// workload makes a little of everything through s and returns the session
// and a request id it used.
func workload(t *testing.T, s *Store, clk *testclock.Clock, round int) (engine.ID, string) {
	t.Helper()
	e := s.Engine
	sys := &engine.Call{}
	var tenant engine.NodeInfo
	must(t, do(t, s, sys, func(c *engine.Call) (err error) {
		tenant, _, err = e.Ensure(c, engine.RootID, engine.Spec{Name: "acme", Quotas: map[string]int64{"http": 10_000}}, nil)
		return err
	}))
	var sess engine.SessionInfo
	must(t, do(t, s, sys, func(c *engine.Call) (err error) {
		sess, err = e.OpenSession(c, tenant.ID, time.Minute, tok(round))
		return err
	}))
	me := &engine.Call{Session: sess.ID}
	var task engine.NodeInfo
	must(t, do(t, s, me, func(c *engine.Call) (err error) {
		task, err = e.Create(c, 0, engine.Spec{Name: fmt.Sprint("task-", round), Quotas: map[string]int64{"http": 100}, Limits: map[string]int64{"db": 3}})
		return err
	}))
	req := fmt.Sprint("charge-", round)
	for i := range 20 {
		c := &engine.Call{Session: sess.ID}
		if i == 7 {
			c.Request = req
		}
		must(t, do(t, s, c, func(c *engine.Call) error { return e.Consume(c, task.ID, "http", 2) }))
	}
	var leases []engine.LeaseInfo
	for range 3 {
		must(t, do(t, s, me, func(c *engine.Call) error {
			l, w, err := e.Acquire(c, task.ID, "db", 0)
			if w != nil {
				return errors.New("unexpected wait")
			}
			leases = append(leases, l)
			return err
		}))
	}
	must(t, do(t, s, me, func(c *engine.Call) error { _, err := e.Release(c, leases[0].ID, engine.Report{}); return err }))
	clk.Advance(time.Second)
	return sess.ID, req
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRestartRebuildsTheEngine closes and reopens the record, with and without
// snapshots in between, and compares the rebuilt engine with the one that
// was live, field by field.
func TestRestartRebuildsTheEngine(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		clk := newClock()
		ctx := context.Background()
		s := open(t, url, clk, 0)
		sess, req := workload(t, s, clk, 1)
		want := s.Engine.Dump()
		must(t, s.Close(ctx))

		s = open(t, url, clk, 0)
		if got := s.Engine.Dump(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after restart the engine differs from the live one")
		}
		// The request id is answered from the record: nothing is applied.
		before := s.Engine.Seq()
		c := &engine.Call{Session: sess, Request: req}
		tasks := want.Nodes[len(want.Nodes)-1].ID
		if err := s.Engine.Consume(c, tasks, "http", 2); err != nil || s.Engine.Seq() != before {
			t.Fatalf("a repeated request after restart: err %v, seq %d -> %d", err, before, s.Engine.Seq())
		}
		// The session survives, found by its token.
		if inf, ok := s.Engine.SessionByToken(tok(1)); !ok || inf.ID != sess {
			t.Fatalf("session %d not found by its token after restart", sess)
		}
		must(t, s.SnapshotNow(ctx))
		workload(t, s, clk, 2)
		want = s.Engine.Dump()
		must(t, s.Close(ctx))

		s = open(t, url, clk, 0)
		defer s.Close(ctx)
		if got := s.Engine.Dump(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after a snapshot and a restart the engine differs from the live one")
		}
	})
}

// TestAutomaticSnapshots lets the sink ask for snapshots every few events and
// checks that a restart from them equals the live engine.
func TestAutomaticSnapshots(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		clk := newClock()
		ctx := context.Background()
		s := open(t, url, clk, 10)
		for round := range 5 {
			workload(t, s, clk, round)
		}
		deadline := time.Now().Add(10 * time.Second)
		for s.Stats().Snapshots == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if st := s.Stats(); st.Snapshots == 0 || st.SnapshotErrors != 0 {
			t.Fatalf("snapshots: %+v", st)
		}
		want := s.Engine.Dump()
		must(t, s.Close(ctx))
		s = open(t, url, clk, 10)
		defer s.Close(ctx)
		if got := s.Engine.Dump(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after automatic snapshots and a restart the engine differs from the live one")
		}
	})
}

// TestSettingsAreRecorded changes the settings at start and finds them on
// record at the next start.
func TestSettingsAreRecorded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		clk := newClock()
		ctx := context.Background()
		set := engine.Settings{TombstoneTTL: 5 * time.Second, NodeRetention: time.Hour}
		s, err := Open(ctx, Options{URL: url, Clock: clk, Settings: &set, Logger: quiet()})
		must(t, err)
		must(t, s.Close(ctx))
		s = open(t, url, clk, 0)
		defer s.Close(ctx)
		if got := s.Engine.Settings(); got != set {
			t.Fatalf("settings after restart: %+v, want %+v", got, set)
		}
	})
}
