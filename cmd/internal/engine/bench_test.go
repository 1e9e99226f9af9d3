package engine

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// committer is a sink standing in for the record's writer: Emit puts the
// event on a pending list, and a goroutine of its own takes the list once it
// holds commitBatch events, as a group commit of that size does, and gives
// them back to the engine for reuse. It does not encode or write, so a
// benchmark measures the engine.
type committer struct {
	e       *Engine
	mu      sync.Mutex // guards pending
	pending []*Event
	wake    chan struct{}
	stop    chan struct{}
	exited  chan struct{}
}

// commitBatch is how many events the committer takes at a time: a group
// commit under load carries hundreds.
const commitBatch = 256

// commitEvents makes f's engine emit to a committer until b ends.
func commitEvents(b *testing.B, f *fixture) {
	c := &committer{e: f.e, wake: make(chan struct{}, 1), stop: make(chan struct{}), exited: make(chan struct{})}
	f.e.sink = c
	go c.run()
	b.Cleanup(func() {
		close(c.stop)
		<-c.exited
	})
}

func (c *committer) Emit(ev *Event) {
	c.mu.Lock()
	c.pending = append(c.pending, ev)
	full := len(c.pending) == commitBatch
	c.mu.Unlock()
	if full {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

func (c *committer) run() {
	defer close(c.exited)
	var batch []*Event
	for {
		select {
		case <-c.wake:
		case <-c.stop:
			return
		}
		c.mu.Lock()
		batch, c.pending = c.pending, batch[:0]
		c.mu.Unlock()
		c.e.Recycle(batch)
		clear(batch)
	}
}

// benchTree builds root > tenant > task and returns a fixture with one
// session on the tenant.
func benchTree(b *testing.B) (*fixture, ID, ID, ID) {
	f := newFixture(b)
	commitEvents(b, f)
	big := int64(math.MaxInt64 / 4)
	tenant := f.tenant(Spec{Name: "tenant", Quotas: map[string]int64{"http": big}})
	s := f.session(tenant, time.Hour)
	task := f.create(s, 0, Spec{Name: "task", Quotas: map[string]int64{"http": big}})
	must(b, f.e.SetQuota(f.sys(), RootID, "http", &big))
	return f, tenant, task, s
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkConsume charges one unit on a chain of depth 4 (subtask, task,
// tenant, root), every level capped, from parallel goroutines.
func BenchmarkConsume(b *testing.B) {
	f, _, task, s := benchTree(b)
	var next atomic.Int64
	var mu sync.Mutex
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		leaf := f.create(s, task, Spec{Name: fmt.Sprint("sub", next.Add(1)), Quotas: map[string]int64{"http": math.MaxInt64 / 4}})
		mu.Unlock()
		c := &Call{Session: s}
		n := 0
		for pb.Next() {
			if n++; n%65536 == 0 {
				f.e.Capture()
			}
			if err := f.e.Consume(c, leaf, "http", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLockBaseline is the floor under BenchmarkConsume: the same
// goroutines taking a bare mutex and bumping four counters.
func BenchmarkLockBaseline(b *testing.B) {
	var mu sync.Mutex
	var counters [4]int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			for i := range counters {
				counters[i]++
			}
			mu.Unlock()
		}
	})
}

// BenchmarkConsumeFloor is what any consume on a chain of depth 4 must do
// under the one lock, from the same goroutines as BenchmarkConsume, built up
// in steps: "counters" bumps four counters (BenchmarkLockBaseline); "chain"
// walks four nodes by their parent pointers, finds the resource in each
// node's map, checks its cap and charges it; "chain+clock" also reads the
// clock; "chain+clock+event" also fills in a 240-byte event that a
// committed one was given back in and hands it on, which is what makes the
// charge durable. Consume's distance from the last step is its own
// overhead; the last step's distance from "counters" is not avoidable.
func BenchmarkConsumeFloor(b *testing.B) {
	type floorNode struct {
		parent *floorNode
		res    map[string]*resState
	}
	var leaf *floorNode
	for range 4 {
		leaf = &floorNode{parent: leaf, res: map[string]*resState{"http": {capped: true, cap: math.MaxInt64}}}
	}
	steps := []struct {
		name                string
		chain, clock, event bool
	}{{"counters", false, false, false}, {"chain", true, false, false}, {"chain+clock", true, true, false}, {"chain+clock+event", true, true, true}}
	for _, st := range steps {
		b.Run(st.name, func(b *testing.B) {
			var mu sync.Mutex
			var counters [4]int64
			var kept [256]Event
			var n int
			var now int64
			clock := newFakeClock()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mu.Lock()
					switch {
					case !st.chain:
						for i := range counters {
							counters[i]++
						}
					default:
						for a := leaf; a != nil; a = a.parent {
							if rs := a.res["http"]; rs.capped && rs.used+1 > rs.cap {
								b.Fatal("denied")
							}
						}
						for a := leaf; a != nil; a = a.parent {
							a.res["http"].used++
						}
					}
					if st.clock {
						now = clock.Now().UnixNano()
					}
					if st.event {
						n++
						kept[n%len(kept)] = Event{Seq: uint64(n), Time: now, Kind: KindConsumed, Node: 5, Name: "http", Amount: 1}
					}
					mu.Unlock()
				}
			})
		})
	}
}

// steady keeps a benchmark in the steady state of a running daemon: time
// passes (1 µs per operation), tombstones live 1 ms, the reaper runs every
// 16,384 operations and a snapshot captures what changed every 65,536. Their
// cost is part of the measurement.
type steady struct {
	f *fixture
	i int
}

func newSteady(b *testing.B, f *fixture) *steady {
	must(b, f.e.Configure(f.sys(), Settings{TombstoneTTL: time.Millisecond, NodeRetention: time.Minute}))
	return &steady{f: f}
}

func (s *steady) tick() {
	s.f.clock.Advance(time.Microsecond)
	s.i++
	if s.i%16384 == 0 {
		s.f.e.Reap(&Call{})
	}
	if s.i%65536 == 0 {
		s.f.e.Capture()
	}
}

// BenchmarkAcquireRelease takes and gives back one lease with no contention.
func BenchmarkAcquireRelease(b *testing.B) {
	f, _, task, s := benchTree(b)
	must(b, f.e.SetLimit(f.sys(), task, "db", ptr(4)))
	st := newSteady(b, f)
	c := &Call{Session: s}
	b.ReportAllocs()
	for b.Loop() {
		st.tick()
		l, w, err := f.e.Acquire(c, task, "db", 0)
		if err != nil || w != nil {
			b.Fatal(err, w)
		}
		if _, err := f.e.Release(c, l.ID, Report{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireQueued queues an acquire behind a full pool of 2 slots and
// hands it a slot by releasing one: enqueue, release, grant.
func BenchmarkAcquireQueued(b *testing.B) {
	f, _, task, s := benchTree(b)
	must(b, f.e.SetLimit(f.sys(), task, "db", ptr(2)))
	c := &Call{Session: s}
	held := make([]ID, 0, 2)
	for range 2 {
		l, _ := f.acquire(s, task, "db")
		held = append(held, l.ID)
	}
	st := newSteady(b, f)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		st.tick()
		_, w, err := f.e.Acquire(c, task, "db", 0)
		if err != nil || w == nil {
			b.Fatal("want a waiter", err)
		}
		if _, err := f.e.Release(c, held[i%2], Report{}); err != nil {
			b.Fatal(err)
		}
		g := <-w.C()
		held[i%2] = g.Lease.ID
		i++
	}
}

// BenchmarkCapture measures how long a snapshot holds the engine lock with
// 100,000 nodes: the first capture copies everything, later ones only what
// changed (1,000 consumes on 1,000 nodes of depth 3).
func BenchmarkCapture(b *testing.B) {
	f, _, task, s := benchTree(b)
	leaves := make([]ID, 0, 100_000)
	for i := range 100_000 {
		leaves = append(leaves, f.create(s, task, Spec{Name: fmt.Sprint("n", i)}))
	}
	b.Run("all-changed", func(b *testing.B) {
		for b.Loop() {
			f.e.mu.Lock()
			for _, id := range leaves {
				f.e.markNode(f.e.nodes[id])
			}
			f.e.mu.Unlock()
			start := time.Now()
			f.e.Capture()
			b.ReportMetric(float64(time.Since(start).Microseconds()), "µs-locked")
		}
	})
	b.Run("1000-changed", func(b *testing.B) {
		c := &Call{Session: s}
		for b.Loop() {
			b.StopTimer()
			for j := range 1000 {
				must(b, f.e.Consume(c, leaves[j*97%len(leaves)], "http", 1))
			}
			b.StartTimer()
			f.e.Capture()
		}
	})
}
