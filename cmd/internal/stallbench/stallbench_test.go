package stallbench

import (
	"runtime"
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
	samples := []sample{
		{at: at(5), lat: 1},  // before any window
		{at: at(12), lat: 2}, // quiet
		{at: at(25), lat: 3}, // busy
		{at: at(35), lat: 4}, // between windows
		{at: at(45), lat: 5}, // quiet
		{at: at(55), lat: 6}, // after every window
	}
	quiet, busy := split(samples, windows)
	if len(quiet) != 2 || quiet[0].lat != 2 || quiet[1].lat != 5 {
		t.Errorf("quiet = %v, want the samples of latency 2 and 5", quiet)
	}
	if len(busy) != 1 || busy[0].lat != 3 {
		t.Errorf("busy = %v, want the sample of latency 3", busy)
	}
}

// TestP99 takes the 99th percentile of each part of 200 samples: latencies
// 1 to 200, of which the sample of latency n started n%7 late.
func TestP99(t *testing.T) {
	samples := make([]sample, 200)
	for i := range samples {
		n := time.Duration(200 - i)
		samples[i] = sample{lat: n, late: n % 7}
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

// TestRunSplitsLatencyIntoLatenessAndCall runs probes that each take 30 ms
// every 5 ms: the call part of their latency holds the 30 ms, the late
// part (the probe not started yet) does not.
func TestRunSplitsLatencyIntoLatenessAndCall(t *testing.T) {
	const took = 30 * time.Millisecond
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
