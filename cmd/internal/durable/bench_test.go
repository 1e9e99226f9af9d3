package durable

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
	"governor.dev/governor/cmd/internal/pgtest"
	"governor.dev/governor/cmd/internal/testclock"
)

// benchURLs are the records the benchmarks run on: memory, SQLite and
// PostgreSQL. Each call of a function gives a fresh, empty record.
func benchURLs() map[string]func(b *testing.B) string {
	return map[string]func(b *testing.B) string{
		"memory":   func(*testing.B) string { return "" },
		"sqlite":   func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "bench.db") },
		"postgres": func(b *testing.B) string { return pgtest.DSN(b) },
	}
}

// commits counts the writer's commits and the time they took.
type commits struct{ n, events, nanos atomic.Int64 }

func (c *commits) observe(events int, d time.Duration) {
	c.n.Add(1)
	c.events.Add(int64(events))
	c.nanos.Add(int64(d))
}

// reset forgets the commits counted so far.
func (c *commits) reset() {
	c.n.Store(0)
	c.events.Store(0)
	c.nanos.Store(0)
}

// report adds the mean batch size and commit time to b's results.
func (c *commits) report(b *testing.B) {
	n := float64(max(c.n.Load(), 1))
	b.ReportMetric(float64(c.events.Load())/n, "events/commit")
	b.ReportMetric(float64(c.nanos.Load())/n/1e6, "ms/commit")
}

// benchSetup opens a store with one tenant and one task per caller, each
// with a session, so callers contend only for the engine and the record. cs
// counts the commits that follow the setup.
func benchSetup(b *testing.B, url string, callers int, cs *commits) (*Store, []engine.ID, []engine.ID) {
	ctx := context.Background()
	s, err := Open(ctx, Options{URL: url, Clock: wallClock{}, Logger: quiet(), Writer: eventlog.WriterOptions{OnCommit: cs.observe}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(ctx) })
	c := &engine.Call{}
	big := int64(math.MaxInt64 / 4)
	tenant, _, err := s.Engine.Ensure(c, engine.RootID, engine.Spec{Name: "bench", Quotas: map[string]int64{"http": big}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var sessions, tasks []engine.ID
	for i := range callers {
		inf, err := s.Engine.OpenSession(c, tenant.ID, time.Hour, tok(10_000+i))
		if err != nil {
			b.Fatal(err)
		}
		task, err := s.Engine.Create(&engine.Call{Session: inf.ID}, 0, engine.Spec{Name: fmt.Sprint("task-", i), Quotas: map[string]int64{"http": big}})
		if err != nil {
			b.Fatal(err)
		}
		sessions, tasks = append(sessions, inf.ID), append(tasks, task.ID)
	}
	if err := s.Wait(ctx, s.Engine.Seq()); err != nil {
		b.Fatal(err)
	}
	cs.reset()
	return s, sessions, tasks
}

// BenchmarkDurableConsume is consumes per second through engine and record
// (no network), at 1, 16 and 64 concurrent callers, each waiting for its
// charge to be on record before the next.
func BenchmarkDurableConsume(b *testing.B) {
	for name, url := range benchURLs() {
		for _, callers := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/callers=%d", name, callers), func(b *testing.B) {
				var cs commits
				s, sessions, tasks := benchSetup(b, url(b), callers, &cs)
				ctx := context.Background()
				per := b.N/callers + 1
				b.ResetTimer()
				start, cpu := time.Now(), testclock.ProcessCPU()
				var wg sync.WaitGroup
				for i := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range per {
							if err := s.Room(ctx); err != nil {
								b.Error(err)
								return
							}
							c := &engine.Call{Session: sessions[i]}
							if err := s.Engine.Consume(c, tasks[i], "http", 1); err != nil {
								b.Error(err)
								return
							}
							if err := s.Wait(ctx, c.Seq); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(per*callers)/time.Since(start).Seconds(), "consumes/s")
				b.ReportMetric(float64((testclock.ProcessCPU()-cpu).Microseconds())/float64(per*callers), "cpu-µs/consume")
				cs.report(b)
			})
		}
	}
}

// bigState fills s with n nodes and m sessions.
func bigState(b *testing.B, s *Store, nodes, sessions int) (engine.ID, []engine.ID) {
	ctx := context.Background()
	c := &engine.Call{}
	tenant, _, err := s.Engine.Ensure(c, engine.RootID, engine.Spec{Name: "big", Quotas: map[string]int64{"http": math.MaxInt64 / 4}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var ids []engine.ID
	for i := range nodes {
		inf, err := s.Engine.Create(c, tenant.ID, engine.Spec{Name: fmt.Sprint("n", i), Quotas: map[string]int64{"http": 1 << 40}})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, inf.ID)
		if i%10_000 == 0 {
			if err := s.Wait(ctx, c.Seq); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range sessions {
		if _, err := s.Engine.OpenSession(c, tenant.ID, time.Hour, tok(100_000+i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Wait(ctx, s.Engine.Seq()); err != nil {
		b.Fatal(err)
	}
	return tenant.ID, ids
}

// BenchmarkRestart measures a restart with 100,000 live nodes and 10,000
// sessions in the snapshot and 100,000 events after it: load, restore,
// replay.
func BenchmarkRestart(b *testing.B) {
	for name, fresh := range benchURLs() {
		if name == "memory" {
			continue
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			url := fresh(b)
			s, err := Open(ctx, Options{URL: url, Clock: wallClock{}, Logger: quiet(), SnapshotEvery: math.MaxInt64})
			if err != nil {
				b.Fatal(err)
			}
			_, ids := bigState(b, s, 100_000, 10_000)
			if err := s.SnapshotNow(ctx); err != nil {
				b.Fatal(err)
			}
			c := &engine.Call{}
			for i := range 100_000 {
				if err := s.Engine.Consume(c, ids[i%len(ids)], "http", 1); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(ctx); err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			b.ResetTimer()
			for b.Loop() {
				before := testclock.ProcessCPU()
				s, err := Open(ctx, Options{URL: url, Clock: wallClock{}, Logger: quiet(), SnapshotEvery: math.MaxInt64})
				if err != nil {
					b.Fatal(err)
				}
				cpu += testclock.ProcessCPU() - before
				b.StopTimer()
				if st := s.Engine.Stats(); st.Nodes < 100_000 || st.Sessions < 10_000 {
					b.Fatalf("restored %d nodes and %d sessions", st.Nodes, st.Sessions)
				}
				if err := s.Close(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/restart")
		})
	}
}

// BenchmarkConsumeDuringSnapshot reports the latency of consumes (engine and
// record), one after another, while a snapshot of 100,000 nodes is taken and
// written: first when every node changed since the last snapshot (the
// capture under the engine lock copies them all), then when 1,000 did (it
// copies those; the image still encodes and writes all 100,000).
func BenchmarkConsumeDuringSnapshot(b *testing.B) {
	for name, fresh := range benchURLs() {
		if name == "memory" {
			continue
		}
		b.Run(name, func(b *testing.B) { benchConsumeDuringSnapshot(b, fresh(b)) })
	}
}

func benchConsumeDuringSnapshot(b *testing.B, url string) {
	ctx := context.Background()
	s, err := Open(ctx, Options{URL: url, Clock: wallClock{}, Logger: quiet(), SnapshotEvery: math.MaxInt64})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	_, ids := bigState(b, s, 100_000, 0)
	for b.Loop() {
		reportLatencies(b, "all-changed-", consumesDuringSnapshot(b, s, ids))
		c := &engine.Call{}
		for i := range 1_000 {
			if err := s.Engine.Consume(c, ids[i*len(ids)/1_000], "http", 1); err != nil {
				b.Fatal(err)
			}
		}
		reportLatencies(b, "1k-changed-", consumesDuringSnapshot(b, s, ids))
	}
}

// consumesDuringSnapshot takes a snapshot and returns the latencies of the
// consumes made, one after another, until it was saved.
func consumesDuringSnapshot(b *testing.B, s *Store, ids []engine.ID) []time.Duration {
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- s.SnapshotNow(ctx) }()
	var lat []time.Duration
	for {
		select {
		case err := <-done:
			if err != nil {
				b.Fatal(err)
			}
			return lat
		default:
		}
		start := time.Now()
		c := &engine.Call{}
		if err := s.Engine.Consume(c, ids[len(lat)%len(ids)], "http", 1); err != nil {
			b.Fatal(err)
		}
		if err := s.Wait(ctx, c.Seq); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
}

// reportLatencies adds the median, 99th percentile and maximum of lat to b's
// results.
func reportLatencies(b *testing.B, prefix string, lat []time.Duration) {
	if len(lat) == 0 {
		b.Fatal("no consume finished during the snapshot")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), prefix+"p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), prefix+"p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), prefix+"max-µs")
	b.ReportMetric(float64(len(lat)), prefix+"consumes")
}

// BenchmarkSnapshot reports what one snapshot of 100,000 nodes allocates
// (B/op with -benchmem) when 1,000 of them changed since the previous one:
// the capture, the merge into the image, the encoding, the compression and
// the save.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, Options{URL: "sqlite:" + filepath.Join(b.TempDir(), "bench.db"), Clock: wallClock{}, Logger: quiet(), SnapshotEvery: math.MaxInt64})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	_, ids := bigState(b, s, 100_000, 0)
	if err := s.SnapshotNow(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		c := &engine.Call{}
		for i := range 1_000 {
			if err := s.Engine.Consume(c, ids[i*len(ids)/1_000], "http", 1); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Wait(ctx, c.Seq); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.SnapshotNow(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
