package eventlog

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// slow is a Backend whose Appends each take at least delay, like a disk's.
type slow struct {
	Backend
	delay time.Duration
}

func (s slow) Append(ctx context.Context, recs []Record) error {
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
	w := NewWriter(slow{m, delay}, 0, opts)
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
