package engine

import (
	"fmt"
	"math"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/stallbench"
)

// wideChildren is how many children the wide node of BenchmarkWideTreeStall
// has; wideRest is how long the wide tenant rests between building it and
// reading it.
const (
	wideChildren = 100_000
	wideRest     = 300 * time.Millisecond
)

// BenchmarkWideTreeStall measures what one tenant's wide tree costs another
// tenant. Tenant "quiet" consumes on a schedule, one consume every 100 µs
// (open loop: a consume's latency counts from its scheduled instant, so a
// stall delays every consume scheduled during it, as it delays callers that
// do not wait for each other). Meanwhile tenant "wide" loops: it builds a
// node of 100,000 children, captures the changes for a snapshot, lets the
// garbage of building it be collected, rests for wideRest (a quiet window),
// then reads every page of the children, cancels the node and, once its
// retention has passed, has the reaper remove it (a busy window). quiet-p99 is over the
// consumes scheduled in quiet windows, busy-p99 over those scheduled in busy
// windows; the two alternate every second or two, so that the load of other
// processes on a shared machine weighs on both alike. busy/quiet is the
// ratio the issue sets at most 2. Each b.N is one loop of the wide tenant;
// at least 3 run.
func BenchmarkWideTreeStall(b *testing.B) {
	benchStall(b, func(w *stallbench.Windows, f *fixture, ws ID, n int) {
		p := f.create(ws, 0, Spec{Name: fmt.Sprint("wide", n)})
		for i := range wideChildren {
			f.create(ws, p, Spec{Name: fmt.Sprint("c", i)})
		}
		f.e.Capture() // as governord's snapshots do, every snapshot_every events
		w.Settle(wideRest)
		w.Rest(wideRest)
		from := w.Begin()
		describeAll(b, f, ws, p)
		must(b, f.e.Cancel(&Call{Session: ws}, p))
		f.clock.Advance(2 * time.Second)
		f.e.Reap(f.sys())
		w.Busy(from)
		if f.e.Stats().Nodes > 10 {
			b.Error("the reaper left the wide node in the tree past its retention")
		}
	})
}

// BenchmarkStallFloor is BenchmarkWideTreeStall with a busy window in which
// the wide loop spins for wideRest without calling the engine: the ratio
// that a goroutine competing for the processors, never for the lock, makes
// on this machine as loaded at the time. BenchmarkWideTreeStall's ratio
// reads against it.
func BenchmarkStallFloor(b *testing.B) {
	benchStall(b, func(w *stallbench.Windows, _ *fixture, _ ID, _ int) {
		w.Rest(wideRest)
		from := w.Begin()
		for time.Since(from) < wideRest {
		}
		w.Busy(from)
	})
}

// benchStall runs loop (at least 3 times, b.N if more) on tenant "wide"
// while tenant "quiet" consumes every 100 µs, and reports the p99 latency
// of the consumes scheduled in the quiet and the busy windows the loop
// marks, and their ratio.
func benchStall(b *testing.B, loop func(w *stallbench.Windows, f *fixture, ws ID, n int)) {
	f := newFixture(b)
	commitEvents(b, f)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(b, f.e.Configure(f.sys(), set))
	big := int64(math.MaxInt64 / 4)
	must(b, f.e.SetQuota(f.sys(), RootID, "http", &big))
	quiet := f.tenant(Spec{Name: "quiet"})
	qs := f.session(quiet, time.Hour)
	leaf := f.create(qs, 0, Spec{Name: "leaf"})
	wide := f.tenant(Spec{Name: "wide"})
	ws := f.session(wide, time.Hour)
	b.ResetTimer()
	stallbench.Run(b, 100*time.Microsecond,
		func(w *stallbench.Windows, n int) { loop(w, f, ws, n) },
		func() error { return f.e.Consume(&Call{Session: qs}, leaf, "http", 1) })
}

// describeAll reads every page of id's children, as a screen scrolling
// through them would, each page into the memory of the one before
// (Page.Into), as governord's API does.
func describeAll(b *testing.B, f *fixture, s, id ID) {
	page := Page{Into: make([]NodeInfo, 0, DefaultPageSize)}
	for {
		_, kids, next, err := f.e.Describe(&Call{Session: s}, id, &page)
		must(b, err)
		if next == 0 {
			if len(kids) == 0 {
				b.Fatal("the wide node has no children to describe")
			}
			return
		}
		page.After = next
	}
}

// BenchmarkEndAndRemoveWide cancels a node of 10,000 children and has the
// reaper remove it once its retention has passed: the ending and the
// removal steps of one wide subtree, the busy window of
// BenchmarkWideTreeStall without the describe. Building the node is not
// timed. -benchmem tells what ending and removing allocate per child.
func BenchmarkEndAndRemoveWide(b *testing.B) {
	f := newFixture(b)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(b, f.e.Configure(f.sys(), set))
	ten := f.tenant(Spec{Name: "t"})
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p := f.sysCreate(ten, Spec{Name: "wide"})
		for i := range 10_000 {
			f.sysCreate(p, Spec{Name: fmt.Sprint("c", i)})
		}
		b.StartTimer()
		must(b, f.e.Cancel(f.sys(), p))
		f.clock.Advance(2 * time.Second)
		f.e.Reap(f.sys())
	}
}

// BenchmarkLapseOfAWideSession times the call that takes the lapse of a
// session owning 10,000 nodes: under its one hold of the engine lock the
// session ends and its nodes are marked; the steps that end them, taken
// by Reap, and building the nodes are not timed.
func BenchmarkLapseOfAWideSession(b *testing.B) {
	f := newFixture(b)
	ten := f.tenant(Spec{Name: "t"})
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := f.session(ten, time.Second)
		for i := range 10_000 {
			f.create(s, 0, Spec{Name: fmt.Sprint("n", i)})
		}
		f.clock.Advance(2 * time.Second)
		b.StartTimer()
		f.describe(ten)
		b.StopTimer()
		f.e.Reap(f.sys())
		b.StartTimer()
	}
}
