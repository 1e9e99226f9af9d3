// Package stallbench measures what one tenant's work costs another
// tenant's calls: a probe runs on a fixed schedule (open loop, so a stall
// delays every probe scheduled during it, as it delays callers that do not
// wait for each other) while a loop alternates quiet and busy windows, and
// the p99 latency of the probes scheduled in each kind of window is
// reported with their ratio. Quiet and busy windows alternate every second
// or two, so that the load of other processes on a shared machine weighs
// on both alike.
package stallbench

import (
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"
)

// Windows is where a loop marks its quiet and busy spans. Only the loop
// writes it; RunWith reads it once the loop has finished.
type Windows struct {
	list  []window
	cpu   *os.File // the CPU profile of the busy window under way, if any
	trace *os.File // the execution trace of the busy window under way, if any
	gcAt  uint64   // gcCycles at the start of the busy window under way
	// open reports whether a probe scheduled before the instant given has
	// not answered yet; nil outside RunWith.
	open func(time.Time) bool
}

// window is a span of the loop: resting or busy.
type window struct {
	from, to time.Time
	busy     bool
	gcs      uint64 // garbage collection cycles completed within it
}

// Rest sleeps for d, a quiet window.
func (w *Windows) Rest(d time.Duration) {
	from, at := time.Now(), gcCycles()
	time.Sleep(d)
	w.end(window{from: from, to: time.Now(), gcs: gcCycles() - at})
}

// end adds x to the list and returns once every probe scheduled before x
// ended has answered, so that what the loop does next cannot delay a probe
// counted in x: a probe scheduled in the last millisecond of a busy window
// would otherwise wait behind the next loop's setting of the stage, which
// is neither window's work.
func (w *Windows) end(x window) {
	w.list = append(w.list, x)
	for w.open != nil && w.open(x.to) {
		time.Sleep(time.Millisecond)
	}
}

// gcCycles is how many garbage collection cycles the process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// gcsPerWindow is the mean number of garbage collection cycles completed
// in the windows of one kind; 0 for none.
func gcsPerWindow(windows []window, busy bool) float64 {
	var n, gcs uint64
	for _, x := range windows {
		if x.busy == busy {
			n, gcs = n+1, gcs+x.gcs
		}
	}
	if n == 0 {
		return 0
	}
	return float64(gcs) / float64(n)
}

// Settle collects garbage and sleeps for d without marking a window: what
// setting the stage left behind (its garbage, the record catching up) is
// then not counted in the quiet window that follows.
func (w *Windows) Settle(d time.Duration) {
	runtime.GC()
	time.Sleep(d)
}

// Busy marks a busy window from from (what Begin returned) to now, and
// ends what Begin started recording.
func (w *Windows) Busy(from time.Time) {
	w.stopProfiles()
	w.end(window{from: from, to: time.Now(), busy: true, gcs: gcCycles() - w.gcAt})
}

// Sample is one probe: its scheduled instant, its latency from then, and
// how late it started, the part of the latency before the probe ran at
// all (a goroutine is started for it once the loop that schedules probes
// wakes up, so this is mostly that loop waking late).
type Sample struct {
	At   time.Time
	Lat  time.Duration
	Late time.Duration
}

// whole, lateness and call are the parts of a sample's latency reported:
// all of it, the part before the probe started, and the probe's own call.
func whole(s Sample) time.Duration    { return s.Lat }
func lateness(s Sample) time.Duration { return s.Late }
func call(s Sample) time.Duration     { return s.Lat - s.Late }

// Answered is what Probes hands on for each probe that has answered: its
// sample, its error, and the instant before which every probe scheduled
// has answered (so that a window ending then is complete).
type Answered func(s Sample, err error, before time.Time)

// Prober runs the probes of Run: it starts one every period, in open loop,
// until stop is closed, hands each answer to done (one at a time), and
// returns once every probe it started has answered. Probes is the prober
// that calls a function in this process; a prober may as well run them
// in a program of its own, as another tenant does (ReadAnswers).
type Prober func(stop <-chan struct{}, done Answered)

// Probes is the Prober that calls probe every period, each call on a
// goroutine of its own: a probe's latency counts from its scheduled
// instant, and a slow probe delays no other, as callers that do not wait
// for each other.
func Probes(period time.Duration, probe func() error) Prober {
	return func(stop <-chan struct{}, done Answered) {
		var (
			calls   sync.WaitGroup
			mu      sync.Mutex            // guards running and next, and serializes done
			running = map[int]time.Time{} // the scheduled instants of the probes under way, by number
			next    time.Time             // the instant of the next probe to be scheduled
		)
		// before is the instant before which every probe scheduled has
		// answered; mu held.
		before := func() time.Time {
			low := next
			for _, at := range running {
				if at.Before(low) {
					low = at
				}
			}
			return low
		}
		start := time.Now()
		for i := 0; ; i++ {
			at := start.Add(time.Duration(i) * period)
			mu.Lock()
			next = at
			mu.Unlock()
			select {
			case <-stop:
				calls.Wait()
				return
			default:
			}
			if d := time.Until(at); d > 0 {
				time.Sleep(d)
			}
			mu.Lock()
			running[i] = at
			mu.Unlock()
			calls.Go(func() {
				late := time.Since(at)
				err := probe()
				lat := time.Since(at)
				mu.Lock()
				defer mu.Unlock()
				delete(running, i)
				done(Sample{At: at, Lat: lat, Late: late}, err, before())
			})
		}
	}
}

// Run calls loop max(b.N, 3) times while it starts probe every period
// (Probes), and reports what RunWith does.
func Run(b *testing.B, period time.Duration, loop func(w *Windows, n int), probe func() error) {
	b.Helper()
	RunWith(b, loop, Probes(period, probe))
}

// RunWith calls loop max(b.N, 3) times while prober runs the probes on a
// goroutine of its own, and reports the p99 latency of the probes
// scheduled in quiet windows (quiet-p99-µs), in busy windows (busy-p99-µs)
// and their ratio (busy/quiet), the p99 of the two parts of that latency
// in each kind of window (-late-: before the probe started, mostly the
// loop scheduling probes waking late; -call-: the probe's own call), the
// mean number of garbage collection cycles this process completed in a
// window of each kind (quiet-gcs, busy-gcs: a probe waits for a processor
// while the collector's worker holds one), and the mean length of a busy
// window (busy-ms: how long the loop's busy work took). A probe that fails
// fails the benchmark.
func RunWith(b *testing.B, loop func(w *Windows, n int), prober Prober) {
	b.Helper()
	var (
		mu       sync.Mutex // guards samples, failed and answered
		samples  []Sample
		failed   error
		answered time.Time // every probe scheduled before it has answered
	)
	stop, probed := make(chan struct{}), make(chan struct{})
	w := &Windows{open: func(before time.Time) bool {
		select {
		case <-probed: // nothing more will answer
			return false
		default:
		}
		mu.Lock()
		defer mu.Unlock()
		return answered.Before(before)
	}}
	go func() {
		defer close(probed)
		prober(stop, func(s Sample, err error, before time.Time) {
			mu.Lock()
			defer mu.Unlock()
			samples, answered = append(samples, s), before
			if err != nil && failed == nil {
				failed = err
			}
		})
	}()
	// the probes end once the loops have, or once one has failed the
	// benchmark
	end := sync.OnceFunc(func() {
		close(stop)
		<-probed
	})
	defer end()
	for n := range max(b.N, 3) {
		loop(w, n)
	}
	end()
	if failed != nil {
		b.Fatal(failed)
	}
	slices.SortFunc(samples, func(x, y Sample) int { return x.At.Compare(y.At) })
	quiet, busy := split(samples, w.list)
	qp, bp := p99(quiet, whole), p99(busy, whole)
	b.ReportMetric(float64(qp.Microseconds()), "quiet-p99-µs")
	b.ReportMetric(float64(bp.Microseconds()), "busy-p99-µs")
	b.ReportMetric(float64(bp)/float64(qp), "busy/quiet")
	for _, part := range []struct {
		name string
		of   func(Sample) time.Duration
	}{{"late", lateness}, {"call", call}} {
		b.ReportMetric(float64(p99(quiet, part.of).Microseconds()), "quiet-"+part.name+"-p99-µs")
		b.ReportMetric(float64(p99(busy, part.of).Microseconds()), "busy-"+part.name+"-p99-µs")
	}
	b.ReportMetric(gcsPerWindow(w.list, false), "quiet-gcs")
	b.ReportMetric(gcsPerWindow(w.list, true), "busy-gcs")
	b.ReportMetric(float64(busyTime(w.list).Microseconds())/1000, "busy-ms")
}

// busyTime is the mean length of the busy windows; 0 for none.
func busyTime(windows []window) time.Duration {
	var n, sum time.Duration
	for _, x := range windows {
		if x.busy {
			n, sum = n+1, sum+x.to.Sub(x.from)
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// split sorts the samples scheduled in a window by the window's kind; both
// lists are in time order.
func split(samples []Sample, windows []window) (quiet, busy []Sample) {
	i := 0
	for _, w := range windows {
		for ; i < len(samples) && samples[i].At.Before(w.to); i++ {
			switch {
			case samples[i].At.Before(w.from):
			case w.busy:
				busy = append(busy, samples[i])
			default:
				quiet = append(quiet, samples[i])
			}
		}
	}
	return quiet, busy
}

// p99 is the 99th percentile of part of the samples; 0 for none.
func p99(samples []Sample, part func(Sample) time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	lat := make([]time.Duration, len(samples))
	for i, s := range samples {
		lat[i] = part(s)
	}
	slices.Sort(lat)
	return lat[len(lat)*99/100]
}
