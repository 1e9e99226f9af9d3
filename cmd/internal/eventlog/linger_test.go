package eventlog

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// slow is a Backend whose Appends each take at least delay, like a disk's.
// If entered is set, it receives the first sequence number of each Append
// as it begins.
type slow struct {
	Backend
	delay   time.Duration
	entered chan uint64
}

func (s slow) Append(ctx context.Context, recs []Record) error {
	if s.entered != nil {
		s.entered <- recs[0].Seq
	}
	time.Sleep(s.delay)
	return s.Backend.Append(ctx, recs)
}

// lingerRound commits one event for each of callers in one commit of
// delay, then lets each caller, when the test closes its turn, add one
// more event and wait for it (closing its finished). It returns the
// commits' sizes once every caller is done and the writer has stopped.
func lingerRound(t *testing.T, opts WriterOptions, callers int, delay time.Duration, play func(turn, finished []chan struct{})) []int {
	t.Helper()
	ctx := ctxT(t)
	m := NewMemory()
	var c commits
	opts.OnCommit, opts.Logger = c.on, quiet
	w := NewWriter(slow{Backend: m, delay: delay}, 0, opts)
	e := newEngine(w, 0)
	for range callers { // before Start: the first commit carries them all
		_, err := e.emit(ctx)
		must(t, err)
	}
	w.Start()
	t.Cleanup(func() { w.Stop(context.WithoutCancel(ctx)) })
	must(t, w.Wait(ctx, uint64(callers)))
	turn, finished := make([]chan struct{}, callers), make([]chan struct{}, callers)
	errs := make(chan error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		turn[i], finished[i] = make(chan struct{}), make(chan struct{})
		wg.Go(func() {
			<-turn[i]
			_, err := e.do(ctx)
			close(finished[i])
			errs <- err
		})
	}
	play(turn, finished)
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	must(t, w.Stop(ctx))
	checkLoad(t, load(t, m), 0, uint64(2*callers))
	return c.get()
}

// The callers a commit released come back one after another, as they do
// over a network, and their events share one commit: the writer waits for
// as many as it released instead of committing the first alone.
func TestWriterWaitsForTheCallersItReleased(t *testing.T) {
	const callers = 8
	sizes := lingerRound(t, WriterOptions{MaxLinger: time.Minute}, callers, 50*time.Millisecond, func(turn, _ []chan struct{}) {
		for _, c := range turn {
			time.Sleep(200 * time.Microsecond) // arrivals further apart than yielding gathers
			close(c)
		}
	})
	if fmt.Sprint(sizes) != fmt.Sprint([]int{callers, callers}) {
		t.Fatalf("commit sizes %v, want [%d %d]: the returning callers' events in one commit", sizes, callers, callers)
	}
}

// A caller whose peers do not come back waits for them no longer than
// about one commit: its own event is committed without them.
func TestWriterWaitsForCallersOnlyBriefly(t *testing.T) {
	const callers = 8
	sizes := lingerRound(t, WriterOptions{}, callers, time.Millisecond, func(turn, finished []chan struct{}) {
		close(turn[0])
		select {
		case <-finished[0]:
		case <-time.After(10 * time.Second):
			t.Error("the lone caller's event was not on record after 10 s: the writer waits for callers who do not come")
		}
		for _, c := range turn[1:] {
			close(c)
		}
	})
	if len(sizes) < 2 || sizes[1] != 1 {
		t.Fatalf("commit sizes %v, want the lone caller's event committed alone, second", sizes)
	}
}

// A wait that ran out pauses waiting for lingerPause commits; one that
// was met does not.
func TestLingerPausesAfterAWaitRanOut(t *testing.T) {
	l := newLinger()
	l.met(true)
	if !l.due() {
		t.Fatal("not due after a wait that was met")
	}
	l.met(false)
	for i := range lingerPause {
		if l.due() {
			t.Fatalf("due %d commits after a wait ran out, want a pause of %d", i, lingerPause)
		}
	}
	if !l.due() {
		t.Fatalf("not due after the pause of %d commits", lingerPause)
	}
}

// After a wait for released callers ran out, the writer does not wait
// after the next commits: an event that comes alone is committed alone,
// not held for a second one.
func TestWriterStopsWaitingWhenCallersDoNotComeBack(t *testing.T) {
	ctx := ctxT(t)
	m := NewMemory()
	entered := make(chan uint64, 16)
	var c commits
	w := NewWriter(slow{Backend: m, delay: 100 * time.Millisecond, entered: entered}, 0, WriterOptions{MaxLinger: time.Minute, OnCommit: c.on, Logger: quiet})
	e := newEngine(w, 0)
	for range 2 { // before Start: the first commit carries both
		_, err := e.emit(ctx)
		must(t, err)
	}
	w.Start()
	t.Cleanup(func() { w.Stop(context.WithoutCancel(ctx)) })
	must(t, w.Wait(ctx, 2))
	_, err := e.emit(ctx) // event 3 comes alone: the wait for a second runs out
	must(t, err)
	for seq := range entered {
		if seq == 3 {
			break
		}
	}
	for range 2 { // events 4 and 5 arrive while event 3 is committed
		_, err := e.emit(ctx)
		must(t, err)
	}
	must(t, w.Wait(ctx, 5))
	_, err = e.emit(ctx) // event 6 alone, event 7 well after it
	must(t, err)
	time.Sleep(50 * time.Millisecond)
	seq, err := e.do(ctx)
	must(t, err)
	must(t, w.Wait(ctx, seq-1))
	must(t, w.Stop(ctx))
	if got := c.get(); fmt.Sprint(got) != fmt.Sprint([]int{2, 1, 2, 1, 1}) {
		t.Fatalf("commit sizes %v, want [2 1 2 1 1]: after a wait ran out, event 6 is not held for event 7", got)
	}
	checkLoad(t, load(t, m), 0, 7)
}
