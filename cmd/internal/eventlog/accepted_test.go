package eventlog

import (
	"testing"
)

// TestAcceptedNeedsNoCommit checks Accepted: it covers an added event while
// its commit hangs, and falls back to what is on record once that commit
// failed.
func TestAcceptedNeedsNoCommit(t *testing.T) {
	ctx := ctxT(t)
	d := newDouble()
	w := startWriter(t, d, 0, WriterOptions{})
	e := newEngine(w, 0)
	release := d.hold()
	d.failWith(errDiskGone) // read as the commit begins, returned once released
	seq, err := e.emit(ctx)
	must(t, err)
	if got := w.Accepted(); got != seq {
		t.Fatalf("Accepted() = %d while the commit of %d hangs, want %d", got, seq, seq)
	}
	if w.Durable() >= seq {
		t.Fatalf("event %d is on record before the held commit returned", seq)
	}
	release()
	<-w.Failed()
	if got := w.Accepted(); got != 0 {
		t.Fatalf("Accepted() = %d after the commit of %d failed, want 0 (the record's end)", got, seq)
	}
}

// TestAcceptedEndsAtStop checks that an event added after Stop, which
// is never committed, is not accepted.
func TestAcceptedEndsAtStop(t *testing.T) {
	ctx := ctxT(t)
	w := startWriter(t, NewMemory(), 0, WriterOptions{})
	e := newEngine(w, 0)
	_, err := e.do(ctx)
	must(t, err)
	must(t, w.Stop(ctx))
	e.mu.Lock()
	w.Add(entry{seq: 2})
	e.mu.Unlock()
	if got := w.Accepted(); got != 1 {
		t.Fatalf("Accepted() = %d with event 2 added after Stop, want 1", got)
	}
}
