package engine

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// The scale benchmarks run one operation in a process that holds 1x, 10x and
// 100x as much of everything else: nodes, sessions and queued waiters of the
// same class. Per-op cost that grows with the scale is a cost that depends on
// the size of the process rather than on what the operation touches.

// scales are the sizes of the process: 1,000, 10,000 and 100,000 nodes; 100,
// 1,000 and 10,000 sessions; 100, 1,000 and 10,000 queued waiters.
var scales = []int{1, 10, 100}

// scaleWorld is a process of 10·k tenants, each with 99 tasks and 10
// sessions. In each tenant the task t0 has a db limit of 1, held, and 10
// acquires of db wait on it. Beside it is the tenant "bench", where the
// benchmarks work: bench > task > sub > leaf, under generous caps.
type scaleWorld struct {
	f          *fixture
	task, leaf ID
	s          ID
}

func newScaleWorld(b *testing.B, k int) *scaleWorld {
	f := newFixture(b)
	commitEvents(b, f)
	big := int64(math.MaxInt64 / 4)
	for i := range 10 * k {
		ten := f.tenant(Spec{Name: fmt.Sprint("tenant", i)})
		var sess []ID
		for range 10 {
			sess = append(sess, f.session(ten, 0))
		}
		busy := f.create(sess[0], 0, Spec{Name: "t0", Limits: map[string]int64{"db": 1}})
		for j := 1; j < 99; j++ {
			f.create(sess[j%10], 0, Spec{Name: fmt.Sprint("t", j)})
		}
		f.grant(sess[0], busy, "db")
		for _, s := range sess {
			f.queue(s, busy, "db")
		}
	}
	w := &scaleWorld{f: f}
	bench := f.tenant(Spec{Name: "bench", Quotas: map[string]int64{"http": big}})
	w.s = f.session(bench, 0)
	w.task = f.create(w.s, 0, Spec{Name: "task", Quotas: map[string]int64{"http": big}, Limits: map[string]int64{"db": 1 << 20}})
	sub := f.create(w.s, w.task, Spec{Name: "sub"})
	w.leaf = f.create(w.s, sub, Spec{Name: "leaf", Quotas: map[string]int64{"http": big}})
	must(b, f.e.SetQuota(f.sys(), RootID, "http", &big))
	f.release(w.s, f.grant(w.s, w.leaf, "db").ID) // a first dispatch parks every blocked group
	return w
}

// daemonLike keeps a scale benchmark in the steady state of a running daemon: time
// passes (1 µs per operation), tombstones and ended nodes live 1 ms, and
// every 4,096 operations the reaper runs and a snapshot captures what
// changed. Their cost is part of the measurement.
type daemonLike struct {
	f *fixture
	i int
}

func newDaemonLike(b *testing.B, f *fixture) *daemonLike {
	must(b, f.e.Configure(f.sys(), Settings{TombstoneTTL: time.Millisecond, NodeRetention: time.Millisecond}))
	f.e.Capture() // the world as built: a daemon starts from a snapshot
	return &daemonLike{f: f}
}

func (p *daemonLike) tick() {
	p.f.clock.Advance(time.Microsecond)
	if p.i++; p.i%4096 == 0 {
		p.f.e.Reap(&Call{})
		p.f.e.Capture()
	}
}

func eachScale(b *testing.B, run func(b *testing.B, k int)) {
	for _, k := range scales {
		b.Run(fmt.Sprintf("%dx", k), func(b *testing.B) { run(b, k) })
	}
}

// BenchmarkScaleConsume charges one unit on a chain of depth 4.
func BenchmarkScaleConsume(b *testing.B) {
	eachScale(b, func(b *testing.B, k int) {
		w := newScaleWorld(b, k)
		c := &Call{Session: w.s}
		p := newDaemonLike(b, w.f)
		b.ReportAllocs()
		for b.Loop() {
			p.tick()
			if err := w.f.e.Consume(c, w.leaf, "http", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScaleAcquireRelease takes and gives back one db lease that fits at
// once, while the other tenants' db waiters stay blocked.
func BenchmarkScaleAcquireRelease(b *testing.B) {
	eachScale(b, func(b *testing.B, k int) {
		w := newScaleWorld(b, k)
		c := &Call{Session: w.s}
		p := newDaemonLike(b, w.f)
		b.ReportAllocs()
		for b.Loop() {
			p.tick()
			l, q, err := w.f.e.Acquire(c, w.leaf, "db", 0)
			if err != nil || q != nil {
				b.Fatal(err, q)
			}
			if _, err := w.f.e.Release(c, l.ID, Report{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkScaleEndNode creates a node that holds one lease and one queued
// acquire, and cancels it: the end revokes the lease and fails the acquire.
func BenchmarkScaleEndNode(b *testing.B) {
	eachScale(b, func(b *testing.B, k int) {
		w := newScaleWorld(b, k)
		c := &Call{Session: w.s}
		spec := Spec{Name: "short", Limits: map[string]int64{"db": 1}}
		p := newDaemonLike(b, w.f)
		b.ReportAllocs()
		for b.Loop() {
			p.tick()
			n, err := w.f.e.Create(c, w.task, spec)
			if err != nil {
				b.Fatal(err)
			}
			if _, q, err := w.f.e.Acquire(c, n.ID, "db", 0); err != nil || q != nil {
				b.Fatal(err, q)
			}
			_, q, err := w.f.e.Acquire(c, n.ID, "db", 0)
			if err != nil || q == nil {
				b.Fatal(err, q)
			}
			if err := w.f.e.Cancel(c, n.ID); err != nil {
				b.Fatal(err)
			}
			if g := <-q.C(); g.Err == nil {
				b.Fatal("the queued acquire of an ended node did not fail")
			}
		}
	})
}

// BenchmarkScaleAbandon queues an acquire behind a full node and withdraws
// it. In "beside", the bench tenant has no other waiter; in "sole", every
// tenant waits with exactly one acquire (100·k tenants) and the one that
// withdraws is always the oldest in the ring, then queues again.
func BenchmarkScaleAbandon(b *testing.B) {
	b.Run("beside", func(b *testing.B) {
		eachScale(b, func(b *testing.B, k int) {
			w := newScaleWorld(b, k)
			full := w.f.create(w.s, w.task, Spec{Name: "full", Limits: map[string]int64{"db": 0}})
			c := &Call{Session: w.s}
			p := newDaemonLike(b, w.f)
			b.ReportAllocs()
			for b.Loop() {
				p.tick()
				_, q, err := w.f.e.Acquire(c, full, "db", 0)
				if err != nil || q == nil {
					b.Fatal(err, q)
				}
				w.f.e.Abandon(c, q)
			}
		})
	})
	b.Run("sole", func(b *testing.B) {
		eachScale(b, func(b *testing.B, k int) {
			f := newFixture(b)
			commitEvents(b, f)
			type waiting struct {
				s, node ID
				q       *Waiter
			}
			ring := make([]waiting, 0, 100*k)
			for i := range 100 * k {
				ten := f.tenant(Spec{Name: fmt.Sprint("tenant", i), Limits: map[string]int64{"db": 0}})
				s := f.session(ten, 0)
				for j := range 9 {
					f.create(s, 0, Spec{Name: fmt.Sprint("t", j)})
				}
				ring = append(ring, waiting{s: s, node: ten, q: f.queue(s, ten, "db")})
			}
			p := newDaemonLike(b, f)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.tick()
				wt := &ring[i%len(ring)]
				i++
				c := &Call{Session: wt.s}
				f.e.Abandon(c, wt.q)
				_, q, err := f.e.Acquire(c, wt.node, "db", 0)
				if err != nil || q == nil {
					b.Fatal(err, q)
				}
				wt.q = q
			}
		})
	})
}

// BenchmarkScaleHandOver hands a slot from one waiter to the next through a
// node with a db limit of 1 under which 100·k sibling tasks each wait with
// one acquire: release the held lease, the oldest waiter is granted, and its
// task queues again.
func BenchmarkScaleHandOver(b *testing.B) {
	eachScale(b, func(b *testing.B, k int) {
		w := newScaleWorld(b, k)
		pool := w.f.create(w.s, w.task, Spec{Name: "pool", Limits: map[string]int64{"db": 1}})
		held := w.f.grant(w.s, pool, "db")
		type waiting struct {
			node ID
			q    *Waiter
		}
		fifo := make([]waiting, 0, 100*k)
		for i := range 100 * k {
			kid := w.f.create(w.s, pool, Spec{Name: fmt.Sprint("kid", i)})
			fifo = append(fifo, waiting{node: kid, q: w.f.queue(w.s, kid, "db")})
		}
		c := &Call{Session: w.s}
		p := newDaemonLike(b, w.f)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p.tick()
			if _, err := w.f.e.Release(c, held.ID, Report{}); err != nil {
				b.Fatal(err)
			}
			wt := &fifo[i%len(fifo)]
			i++
			g := <-wt.q.C()
			if g.Err != nil {
				b.Fatal(g.Err)
			}
			held = g.Lease
			_, q, err := w.f.e.Acquire(c, wt.node, "db", 0)
			if err != nil || q == nil {
				b.Fatal(err, q)
			}
			wt.q = q
		}
	})
}
