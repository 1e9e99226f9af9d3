package stallbench

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// at is the instant ms milliseconds after the epoch.
func at(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }

func TestSplitSortsSamplesByTheirWindow(t *testing.T) {
	windows := []window{
		{from: at(10), to: at(20)},
		{from: at(20), to: at(30), busy: true},
		{from: at(40), to: at(50)},
	}
	samples := []Sample{
		{At: at(5), Lat: 1},  // before any window
		{At: at(12), Lat: 2}, // quiet
		{At: at(25), Lat: 3}, // busy
		{At: at(35), Lat: 4}, // between windows
		{At: at(45), Lat: 5}, // quiet
		{At: at(55), Lat: 6}, // after every window
	}
	quiet, busy := split(samples, windows)
	if len(quiet) != 2 || quiet[0].Lat != 2 || quiet[1].Lat != 5 {
		t.Errorf("quiet = %v, want the samples of latency 2 and 5", quiet)
	}
	if len(busy) != 1 || busy[0].Lat != 3 {
		t.Errorf("busy = %v, want the sample of latency 3", busy)
	}
}

// TestP99 takes the 99th percentile of each part of 200 samples: latencies
// 1 to 200, of which the sample of latency n started n%7 late.
func TestP99(t *testing.T) {
	samples := make([]Sample, 200)
	for i := range samples {
		n := time.Duration(200 - i)
		samples[i] = Sample{Lat: n, Late: n % 7}
	}
	if got := p99(samples, whole); got != 199 {
		t.Errorf("p99 of latencies 1..200 = %d, want 199", got)
	}
	if got := p99(samples, lateness); got != 6 {
		t.Errorf("p99 of lateness = %d, want 6", got)
	}
	if got := p99(samples, call); got != 196 { // n - n%7 is 196 for n from 196 to 200
		t.Errorf("p99 of calls = %d, want 196", got)
	}
	if got := p99(nil, whole); got != 0 {
		t.Errorf("p99 of nothing = %d, want 0", got)
	}
}

// TestRunSplitsLatencyIntoLatenessAndCall runs probes that each take 300
// ms every 5 ms: the call part of their latency holds the 300 ms, the late
// part (the probe not started yet) does not. (With probes of 30 ms, a wake
// 30 ms late under a loaded race-detector run once failed it.)
func TestRunSplitsLatencyIntoLatenessAndCall(t *testing.T) {
	const took = 300 * time.Millisecond
	res := testing.Benchmark(func(b *testing.B) {
		Run(b, 5*time.Millisecond, func(w *Windows, _ int) {
			w.Rest(40 * time.Millisecond)
			from := w.Begin()
			time.Sleep(40 * time.Millisecond)
			w.Busy(from)
		}, func() error { time.Sleep(took); return nil })
	})
	for _, kind := range []string{"quiet", "busy"} {
		if c := res.Extra[kind+"-call-p99-µs"]; c < float64(took.Microseconds()) {
			t.Errorf("%s-call-p99-µs %v, want at least %v", kind, c, took.Microseconds())
		}
	}
	if l := res.Extra["quiet-late-p99-µs"]; l >= float64(took.Microseconds()) {
		t.Errorf("quiet-late-p99-µs %v: the probes' own %v counted as lateness", l, took)
	}
}

// TestWindowsCountGarbageCollections checks that a window counts the
// collection cycles completed within it: one forced in a busy window shows
// in busy-gcs, none in the quiet window before it.
func TestWindowsCountGarbageCollections(t *testing.T) {
	w := &Windows{}
	runtime.GC()
	w.Rest(0)
	from := w.Begin()
	runtime.GC()
	w.Busy(from)
	if q, b := gcsPerWindow(w.list, false), gcsPerWindow(w.list, true); q != 0 || b < 1 {
		t.Fatalf("quiet-gcs %v, busy-gcs %v; want 0 and at least 1", q, b)
	}
}

func TestGCsPerWindowIsTheMeanOfAKind(t *testing.T) {
	windows := []window{{gcs: 1}, {busy: true, gcs: 3}, {gcs: 0}, {busy: true, gcs: 0}}
	if q, b := gcsPerWindow(windows, false), gcsPerWindow(windows, true); q != 0.5 || b != 1.5 {
		t.Errorf("quiet %v, busy %v; want 0.5 and 1.5", q, b)
	}
	if n := gcsPerWindow(nil, true); n != 0 {
		t.Errorf("no window: %v, want 0", n)
	}
}

// TestWindowEndsOnceItsProbesAnswered checks that a window is closed only
// when every probe scheduled in it has answered, and that a probe
// scheduled after it does not hold it open.
func TestWindowEndsOnceItsProbesAnswered(t *testing.T) {
	var (
		mu       sync.Mutex
		answered bool
	)
	inWindow := time.Now()
	afterIt := inWindow.Add(time.Hour) // scheduled after the window, never answers
	w := &Windows{open: func(before time.Time) bool {
		mu.Lock()
		defer mu.Unlock()
		return !answered && inWindow.Before(before) || afterIt.Before(before)
	}}
	go func() {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		answered = true
	}()
	from := w.Begin()
	w.Busy(from)
	mu.Lock()
	defer mu.Unlock()
	if !answered {
		t.Fatal("the busy window closed before the probe scheduled in it answered")
	}
}

func TestBusyTimeIsTheMeanOfTheBusyWindows(t *testing.T) {
	windows := []window{
		{from: at(0), to: at(50)},
		{from: at(50), to: at(60), busy: true},
		{from: at(60), to: at(100)},
		{from: at(100), to: at(130), busy: true},
	}
	if got := busyTime(windows); got != 20*time.Millisecond {
		t.Errorf("busyTime = %v, want 20ms", got)
	}
	if got := busyTime(nil); got != 0 {
		t.Errorf("busyTime of no window = %v, want 0", got)
	}
}

// TestProbesSayWhatHasAnswered runs probes of which every third takes
// 20 ms, so that answers come out of order, and checks that whenever an
// answer says that every probe scheduled before an instant has answered,
// every probe scheduled before it has indeed been handed on.
func TestProbesSayWhatHasAnswered(t *testing.T) {
	const period = time.Millisecond
	var (
		mu      sync.Mutex
		calls   int
		ats     []time.Time // the answers' instants, in the order handed on
		befores []time.Time
	)
	stop := make(chan struct{})
	Probes(period, func() error {
		mu.Lock()
		calls++
		slow := calls%3 == 1
		if calls == 100 { // stopped by count, not by time, so a loaded machine cannot starve it
			close(stop)
		}
		mu.Unlock()
		if slow {
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	})(stop, func(s Sample, _ error, before time.Time) {
		ats, befores = append(ats, s.At), append(befores, before)
	})
	start := slices.MinFunc(ats, time.Time.Compare)
	for i, before := range befores {
		scheduled := int((before.Sub(start) + period - 1) / period) // the instants start, start+period, ... before it
		handed := 0
		for _, at := range ats[:i+1] {
			if at.Before(before) {
				handed++
			}
		}
		if handed != scheduled {
			t.Fatalf("answer %d says every probe scheduled in the first %v has answered: %d were scheduled, %d handed on", i, before.Sub(start), scheduled, handed)
		}
	}
	if len(ats) < 50 {
		t.Fatalf("%d probes answered, want at least 50: every probe started answers", len(ats))
	}
}

// TestAnswersCrossAProgram writes two answers, one failed, as a prober in
// another program does, and reads them back.
func TestAnswersCrossAProgram(t *testing.T) {
	type answer struct {
		s      Sample
		err    string
		before time.Time
	}
	sent := []answer{
		{Sample{At: time.Unix(1700000000, 123), Lat: 2500 * time.Microsecond, Late: 700 * time.Microsecond}, "", time.Unix(1700000000, 99)},
		{Sample{At: time.Unix(1700000001, 5), Lat: time.Second, Late: 0}, "unavailable:\nno leader", time.Unix(1700000001, 5)},
	}
	var wire bytes.Buffer
	write := WriteAnswers(&wire)
	for _, a := range sent {
		var err error
		if a.err != "" {
			err = errors.New(a.err)
		}
		write(a.s, err, a.before)
	}
	var got []answer
	if err := ReadAnswers(&wire, func(s Sample, err error, before time.Time) {
		a := answer{s: s, before: before}
		if err != nil {
			a.err = err.Error()
		}
		got = append(got, a)
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d answers, want 2", len(got))
	}
	for i, a := range got {
		want := sent[i]
		if !a.s.At.Equal(want.s.At) || a.s.Lat != want.s.Lat || a.s.Late != want.s.Late || !a.before.Equal(want.before) {
			t.Errorf("answer %d read as %+v before %v, want %+v before %v", i, a.s, a.before, want.s, want.before)
		}
	}
	if got[0].err != "" || got[1].err != "unavailable: no leader" {
		t.Errorf("errors read as %q and %q, want none and %q", got[0].err, got[1].err, "unavailable: no leader")
	}
	if err := ReadAnswers(strings.NewReader("12 not-a-number 3 4\n"), func(Sample, error, time.Time) {}); err == nil {
		t.Error("a line that is not an answer was read without an error")
	}
}

// TestRunWaitsForTheProber runs a prober whose answers say every probe up
// to 30 ms ago has answered: a busy window ends only once its probes have,
// that is 30 ms after its busy work.
func TestRunWaitsForTheProber(t *testing.T) {
	const lag = 30 * time.Millisecond
	var waited time.Duration
	testing.Benchmark(func(b *testing.B) {
		RunWith(b, func(w *Windows, _ int) {
			w.Rest(5 * time.Millisecond)
			from := w.Begin()
			to := time.Now()
			w.Busy(from)
			waited = time.Since(to)
		}, func(stop <-chan struct{}, done Answered) {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
					now := time.Now()
					done(Sample{At: now.Add(-lag), Lat: lag}, nil, now.Add(-lag))
				}
			}
		})
	})
	if waited < lag {
		t.Fatalf("the busy window ended %v after its work; its probes answered only %v after", waited, lag)
	}
}

// TestAFailedLoopEndsTheProbes fails the benchmark in its loop: the
// prober is still told to stop, and Run returns only once it has.
func TestAFailedLoopEndsTheProbes(t *testing.T) {
	stopped := make(chan struct{})
	testing.Benchmark(func(b *testing.B) {
		RunWith(b, func(*Windows, int) { b.Fatal("the loop failed") }, func(stop <-chan struct{}, _ Answered) {
			<-stop
			close(stopped)
		})
	})
	select {
	case <-stopped:
	default:
		t.Fatal("the benchmark ended with its prober still running")
	}
}
