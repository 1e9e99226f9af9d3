package engine

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// wideChildren is how many children the wide node of BenchmarkWideTreeStall
// has.
const wideChildren = 100_000

// BenchmarkWideTreeStall measures what one tenant's wide tree costs another
// tenant. Tenant "quiet" consumes on a schedule, one consume every 100 µs
// (open loop: a consume's latency counts from its scheduled instant, so a
// stall delays every consume scheduled during it, as it delays callers that
// do not wait for each other). First with nothing else running (quiet-p99),
// then while tenant "wide" loops: it builds a node of 100,000 children, reads
// every page of them and cancels the node (busy-p99, over the consumes
// scheduled while it reads and cancels). busy/quiet is the ratio the issue
// sets at most 2.
func BenchmarkWideTreeStall(b *testing.B) {
	f := newFixture(b)
	commitEvents(b, f)
	big := int64(math.MaxInt64 / 4)
	must(b, f.e.SetQuota(f.sys(), RootID, "http", &big))
	quiet := f.tenant(Spec{Name: "quiet"})
	qs := f.session(quiet, time.Hour)
	leaf := f.create(qs, 0, Spec{Name: "leaf"})
	wide := f.tenant(Spec{Name: "wide"})
	ws := f.session(wide, time.Hour)

	probe := func(d time.Duration, counted func() bool) []time.Duration {
		var lat []time.Duration
		start := time.Now()
		for i := 0; ; i++ {
			at := start.Add(time.Duration(i) * 100 * time.Microsecond)
			if at.Sub(start) > d {
				return lat
			}
			if w := time.Until(at); w > 0 {
				time.Sleep(w)
			}
			must(b, f.e.Consume(&Call{Session: qs}, leaf, "http", 1))
			if counted() {
				lat = append(lat, time.Since(at))
			}
		}
	}
	b.ResetTimer()
	quietLat := probe(time.Second, func() bool { return true })

	var stressing, done atomic.Bool
	loops := make(chan int)
	go func() {
		n := 0
		for !done.Load() {
			p := f.create(ws, 0, Spec{Name: fmt.Sprint("wide", n)})
			for i := range wideChildren {
				f.create(ws, p, Spec{Name: fmt.Sprint("c", i)})
			}
			stressing.Store(true)
			describeAll(b, f, ws, p)
			must(b, f.e.Cancel(&Call{Session: ws}, p))
			stressing.Store(false)
			n++
		}
		loops <- n
	}()
	var busyLat []time.Duration
	for i := 0; i < b.N || len(busyLat) < 1000; i++ {
		busyLat = append(busyLat, probe(2*time.Second, stressing.Load)...)
	}
	done.Store(true)
	n := <-loops
	qp, bp := p99(quietLat), p99(busyLat)
	b.ReportMetric(float64(qp.Microseconds()), "quiet-p99-µs")
	b.ReportMetric(float64(bp.Microseconds()), "busy-p99-µs")
	b.ReportMetric(float64(bp)/float64(qp), "busy/quiet")
	b.ReportMetric(float64(n), "wide-loops")
}

func p99(lat []time.Duration) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[len(s)*99/100]
}

// describeAll reads every page of id's children, as a screen scrolling
// through them would.
func describeAll(b *testing.B, f *fixture, s, id ID) {
	var page Page
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
