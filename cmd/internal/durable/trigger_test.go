package durable

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
)

// TestSinkAsksForSnapshots feeds events to a sink at set times and with set
// committed bytes, and checks after each whether it asked for a snapshot:
// by count, by the engine's time since it last asked, and by bytes since it
// last asked; each ask starts all three over.
func TestSinkAsksForSnapshots(t *testing.T) {
	type step struct {
		at        time.Duration // engine time of the event, from the first
		committed int           // bytes committed before it
		ask       bool
	}
	for _, tc := range []struct {
		name     string
		every    uint64
		interval time.Duration
		maxBytes int64
		steps    []step
	}{
		{"count", 3, 0, 0, []step{{0, 0, false}, {time.Hour, 0, false}, {time.Hour, 0, true}, {time.Hour, 0, false}, {time.Hour, 0, false}, {time.Hour, 0, true}}},
		{"interval", math.MaxUint64, time.Minute, 0, []step{
			{0, 0, false}, {30 * time.Second, 0, false}, {time.Minute, 0, true}, {61 * time.Second, 0, false},
			{119 * time.Second, 0, false}, {2 * time.Minute, 0, true},
		}},
		{"bytes", math.MaxUint64, 0, 1000, []step{
			{0, 0, false}, {0, 600, false}, {0, 399, false}, {0, 1, true}, {0, 999, false}, {time.Hour, 1, true},
		}},
		{"all three", 4, time.Minute, 1000, []step{
			{0, 0, false}, {time.Minute, 0, true}, {time.Minute, 1000, true}, {time.Minute, 0, false},
			{time.Minute, 0, false}, {time.Minute, 0, false}, {time.Minute, 0, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := eventlog.Open(context.Background(), "", quiet())
			must(t, err)
			defer b.Close()
			s := &sink{every: tc.every, interval: int64(tc.interval), maxBytes: tc.maxBytes, trigger: make(chan struct{}, 1)}
			s.w = eventlog.NewWriter(b, 0, eventlog.WriterOptions{})
			start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()
			for i, st := range tc.steps {
				s.committed(st.committed)
				s.Emit(&engine.Event{Seq: uint64(i + 1), Time: start + int64(st.at), Kind: engine.KindSettings})
				asked := len(s.trigger) == 1
				if asked != st.ask {
					t.Fatalf("event %d at +%s after %d more bytes: asked for a snapshot %v, want %v", i+1, st.at, st.committed, asked, st.ask)
				}
				if asked {
					<-s.trigger
				}
			}
		})
	}
}

// TestSnapshotAfterInterval takes a snapshot once the interval has passed,
// after only a few events, and restarts from it to the live state; after
// the restart the interval runs from the snapshot's time, not from the
// first event.
func TestSnapshotAfterInterval(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		clk := newClock()
		ctx := context.Background()
		opts := Options{URL: url, Clock: clk, SnapshotEvery: math.MaxInt64, SnapshotInterval: time.Minute, Logger: quiet()}
		s, err := Open(ctx, opts)
		must(t, err)
		workload(t, s, clk, 1)
		clk.Advance(time.Minute)
		workload(t, s, clk, 2)
		waitSnapshots(t, s, 1)
		if st := s.Stats(); st.LastSnapshot == 0 || st.Snapshots != 1 {
			t.Fatalf("a minute and %d events after the first: %+v, want one snapshot", s.Engine.Seq(), st)
		}
		want := s.Engine.Dump()
		must(t, s.Close(ctx))
		s, err = Open(ctx, opts)
		must(t, err)
		defer s.Close(ctx)
		if got := s.Engine.Dump(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after a snapshot by time the restarted engine differs from the live one")
		}
		probe := func(i int) {
			must(t, do(t, s, &engine.Call{}, func(c *engine.Call) error {
				_, _, err := s.Engine.Ensure(c, engine.RootID, engine.Spec{Name: fmt.Sprint("probe-", i)}, nil)
				return err
			}))
		}
		probe(1) // a second after the snapshot's time
		clk.Advance(59 * time.Second)
		probe(2) // a minute after it, 59 s after the first event since the restart
		waitSnapshots(t, s, 1)
		if st := s.Stats(); st.Snapshots != 1 || st.LastSnapshot != s.Engine.Seq() {
			t.Fatalf("a minute after the loaded snapshot: %+v, want a snapshot at %d", st, s.Engine.Seq())
		}
	})
}

// TestSnapshotAfterBytes takes a snapshot once the events since the last one
// took the configured bytes.
func TestSnapshotAfterBytes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		clk := newClock()
		ctx := context.Background()
		s, err := Open(ctx, Options{URL: url, Clock: clk, SnapshotEvery: math.MaxInt64, SnapshotBytes: 1500, Logger: quiet()})
		must(t, err)
		defer s.Close(ctx)
		for round := 0; s.Stats().Snapshots == 0; round++ {
			if round == 20 {
				t.Fatalf("no snapshot after 20 rounds of events: %+v", s.Stats())
			}
			workload(t, s, clk, round)
		}
		if st := s.Stats(); st.SnapshotErrors != 0 {
			t.Fatalf("snapshots: %+v", st)
		}
	})
}

// waitSnapshots waits until s has saved n snapshots.
func waitSnapshots(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().Snapshots < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}
