package eventlog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// commits records the batch sizes OnCommit reports.
type commits struct {
	mu    sync.Mutex
	sizes []int
}

func (c *commits) on(events int, _ time.Duration) {
	c.mu.Lock()
	c.sizes = append(c.sizes, events)
	c.mu.Unlock()
}

func (c *commits) get() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.sizes...)
}

// startWriter starts a writer on b and stops it when t ends.
func startWriter(t *testing.T, b Backend, durable uint64, opts WriterOptions) *Writer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	w := NewWriter(b, durable, opts)
	w.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		w.Stop(ctx) // a test that failed with a commit held aborts it here
	})
	return w
}

func TestWriterCommitsInOrder(t *testing.T) {
	ctx := ctxT(t)
	m := NewMemory()
	w := startWriter(t, m, 0, WriterOptions{})
	e := newEngine(w, 0)
	for range 100 {
		if _, err := e.do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if w.Durable() != 100 {
		t.Fatalf("Durable() = %d, want 100", w.Durable())
	}
	checkLoad(t, load(t, m), 0, 100)
}

// While one commit is in flight, everything added meanwhile becomes the
// next batch: one commit for all of it.
func TestWriterGroupsWhatArrivesDuringACommit(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	release := d.hold()
	var c commits
	w := startWriter(t, d, 0, WriterOptions{OnCommit: c.on})
	e := newEngine(w, 0)
	const producers = 64
	errs := make(chan error, producers)
	go func() { _, err := e.do(ctx); errs <- err }()
	<-d.entered // event 1 is in flight, alone
	var added sync.WaitGroup
	for range producers - 1 {
		added.Add(1)
		go func() {
			seq, err := e.emit(ctx)
			added.Done()
			if err == nil {
				err = w.Wait(ctx, seq)
			}
			errs <- err
		}()
	}
	added.Wait()
	release()
	for range producers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := c.get(); fmt.Sprint(got) != fmt.Sprint([]int{1, producers - 1}) {
		t.Fatalf("commit sizes %v, want [1 %d]", got, producers-1)
	}
	checkLoad(t, load(t, d), 0, producers)
}

// Concurrent producers on a real disk make fewer commits than events.
func TestWriterBatchesGrowUnderConcurrency(t *testing.T) {
	ctx := ctxT(t)
	b := openURL(t, backendCases[1].newURL(t))
	var c commits
	w := startWriter(t, b, 0, WriterOptions{OnCommit: c.on})
	e := newEngine(w, 0)
	const producers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, producers*each)
	for range producers {
		wg.Go(func() {
			for range each {
				if _, err := e.do(ctx); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A caller may see its event durable before OnCommit has run for its
	// batch; once the writer has stopped, every callback has.
	must(t, w.Stop(ctx))
	sizes, total := c.get(), 0
	for _, s := range sizes {
		total += s
	}
	if total != producers*each || len(sizes) >= total {
		t.Fatalf("%d events in %d commits; want %d events in fewer commits", total, len(sizes), producers*each)
	}
	t.Logf("%d events in %d commits", total, len(sizes))
	checkLoad(t, load(t, b), 0, producers*each)
}

func TestWriterBatchesAreBounded(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	release := d.hold()
	var c commits
	w := startWriter(t, d, 0, WriterOptions{MaxBatch: 3, OnCommit: c.on})
	e := newEngine(w, 0)
	for range 10 {
		if _, err := e.emit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	release()
	must(t, w.Wait(ctx, 10))
	for _, n := range c.get() {
		if n > 3 {
			t.Fatalf("commit sizes %v, want none above MaxBatch 3", c.get())
		}
	}
	checkLoad(t, load(t, d), 0, 10)
}

func TestRoomBlocksAtTheBoundAndResumes(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	release := d.hold()
	w := startWriter(t, d, 0, WriterOptions{MaxBacklog: 4})
	e := newEngine(w, 0)
	for range 4 {
		if _, err := e.emit(ctx); err != nil {
			t.Fatalf("below the bound: %v", err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := w.Room(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Room at the bound = %v, want it to wait until its context ends", err)
	}
	resumed := make(chan error, 1)
	go func() { resumed <- w.Room(ctx) }()
	release()
	if err := <-resumed; err != nil {
		t.Fatalf("Room after the backlog was committed: %v", err)
	}
}

func TestWaitHonoursItsContextAndUnappliesNothing(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	release := d.hold()
	w := startWriter(t, d, 0, WriterOptions{})
	e := newEngine(w, 0)
	seq, err := e.emit(ctx)
	must(t, err)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := w.Wait(gone, seq); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context = %v, want context.Canceled", err)
	}
	release()
	must(t, w.Wait(ctx, seq))
	checkLoad(t, load(t, d), 0, 1)
}

func TestWaitForAnEventNeverAdded(t *testing.T) {
	w := startWriter(t, NewMemory(), 5, WriterOptions{})
	must(t, w.Wait(ctxT(t), 5))
	if err := w.Wait(ctxT(t), 6); !errors.Is(err, ErrNotAdded) {
		t.Fatalf("Wait(6) = %v, want ErrNotAdded", err)
	}
}

func TestWaitOnADurableEventAllocatesNothing(t *testing.T) {
	w := startWriter(t, NewMemory(), 0, WriterOptions{})
	e := newEngine(w, 0)
	ctx := ctxT(t)
	_, err := e.do(ctx)
	must(t, err)
	if n := testing.AllocsPerRun(1000, func() { w.Wait(ctx, 1) }); n != 0 {
		t.Fatalf("Wait on a durable event: %v allocations, want 0", n)
	}
}

func TestAddOutOfOrderPanics(t *testing.T) {
	w := NewWriter(NewMemory(), 3, WriterOptions{})
	defer func() {
		if r := fmt.Sprint(recover()); !strings.Contains(r, "Add(event 5) after event 3") {
			t.Fatalf("panic %q, want one naming both events", r)
		}
	}()
	w.Add(entry{seq: 5})
}

var errDiskGone = errors.New("disk gone")

// After a failed commit nothing more is committed, every wait for an event
// past the record fails, and events already on record still answer nil.
func TestAFailedCommitIsFatal(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	w := startWriter(t, d, 0, WriterOptions{})
	e := newEngine(w, 0)
	for range 3 {
		_, err := e.do(ctx)
		must(t, err)
	}
	release := d.hold()
	d.failWith(errDiskGone)
	const waiters = 200
	errs := make(chan error, waiters)
	for range waiters {
		go func() { _, err := e.do(ctx); errs <- err }()
	}
	release()
	for range waiters {
		if err := <-errs; !errors.Is(err, ErrCommitFailed) || !errors.Is(err, errDiskGone) {
			t.Fatalf("producer after the failure: %v, want ErrCommitFailed wrapping the cause", err)
		}
	}
	select {
	case <-w.Failed():
	default:
		t.Fatal("Failed() is not closed")
	}
	if err := w.Err(); !errors.Is(err, ErrCommitFailed) || !errors.Is(err, errDiskGone) {
		t.Fatalf("Err() = %v, want ErrCommitFailed wrapping the cause", err)
	}
	if w.Durable() != 3 {
		t.Fatalf("Durable() = %d, want 3", w.Durable())
	}
	must(t, w.Wait(ctx, 3))
	e.mu.Lock()
	e.n++
	w.Add(entry{seq: e.n})
	after := e.n
	e.mu.Unlock()
	if err := w.Wait(ctx, after); !errors.Is(err, ErrCommitFailed) {
		t.Fatalf("Wait for an event added after the failure: %v, want ErrCommitFailed", err)
	}
	if err := w.Room(ctx); !errors.Is(err, ErrCommitFailed) {
		t.Fatalf("Room after the failure: %v, want ErrCommitFailed", err)
	}
	d.failWith(nil)
	if err := w.Stop(ctx); !errors.Is(err, ErrCommitFailed) {
		t.Fatalf("Stop after the failure: %v, want ErrCommitFailed", err)
	}
	if n := d.appendCount(); n != 3 {
		t.Fatalf("%d appends reached the store, want only the 3 before the failure", n)
	}
	checkLoad(t, load(t, d), 0, 3)
}

func TestAnEncodingErrorIsAFailedCommit(t *testing.T) {
	ctx := ctxT(t)
	w := startWriter(t, NewMemory(), 0, WriterOptions{})
	bad := errors.New("cannot encode")
	w.Add(entry{seq: 1, err: bad})
	if err := w.Wait(ctx, 1); !errors.Is(err, ErrCommitFailed) || !errors.Is(err, bad) {
		t.Fatalf("Wait = %v, want ErrCommitFailed wrapping the encoding error", err)
	}
	<-w.Failed()
}

func TestStopDrainsThenRefuses(t *testing.T) {
	ctx := ctxT(t)
	m := NewMemory()
	w := NewWriter(m, 0, WriterOptions{Logger: quiet})
	e := newEngine(w, 0)
	for range 100 {
		_, err := e.emit(ctx)
		must(t, err)
	}
	must(t, w.Stop(ctx)) // never started: Stop still commits what is pending
	checkLoad(t, load(t, m), 0, 100)
	must(t, w.Wait(ctx, 100))
	e.mu.Lock()
	w.Add(entry{seq: 101})
	e.mu.Unlock()
	if err := w.Wait(ctx, 101); !errors.Is(err, ErrStopped) {
		t.Fatalf("Wait for an event added after Stop: %v, want ErrStopped", err)
	}
	if err := w.Room(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("Room after Stop: %v, want ErrStopped", err)
	}
	must(t, w.Stop(ctx))
	w.Start()
	checkLoad(t, load(t, m), 0, 100)
}

func TestStopWhileACommitHangs(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	d.hold()
	w := startWriter(t, d, 0, WriterOptions{})
	e := newEngine(w, 0)
	_, err := e.emit(ctx)
	must(t, err)
	<-d.entered
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := w.Stop(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want context.DeadlineExceeded", err)
	}
	<-w.Failed()
	if err := w.Wait(ctx, 1); !errors.Is(err, ErrCommitFailed) {
		t.Fatalf("Wait after an aborted commit: %v, want ErrCommitFailed", err)
	}
}

// Done gets every committed entry once, in order, and only once it is on
// record; a failed commit hands nothing on.
func TestWriterHandsOnOnlyCommittedEntries(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	var mu sync.Mutex
	var done []uint64
	var w *Writer
	w = startWriter(t, d, 0, WriterOptions{MaxBatch: 7, Done: func(entries []Entry, _ int) {
		mu.Lock()
		defer mu.Unlock()
		for _, en := range entries {
			if en.EventSeq() > w.Durable() {
				t.Errorf("entry %d handed on before it was on record (durable %d)", en.EventSeq(), w.Durable())
			}
			done = append(done, en.EventSeq())
		}
	}})
	e := newEngine(w, 0)
	for range 50 {
		if _, err := e.do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	d.failWith(errDiskGone)
	if _, err := e.do(ctx); !errors.Is(err, ErrCommitFailed) {
		t.Fatalf("commit on a failed disk: %v, want ErrCommitFailed", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(done) != 50 {
		t.Fatalf("%d entries handed on, want the 50 committed", len(done))
	}
	for i, seq := range done {
		if seq != uint64(i+1) {
			t.Fatalf("entry %d handed on at position %d", seq, i)
		}
	}
}
