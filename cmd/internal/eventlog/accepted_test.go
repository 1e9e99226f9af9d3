package eventlog

import (
	"testing"
)

// TestAcceptedNeedsNoCommit checks Accepted: true for an added event while
// its commit hangs, false for one never added, and false once that commit
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
	if !w.Accepted(seq) {
		t.Fatalf("Accepted(%d) = false while its commit hangs, want true", seq)
	}
	if w.Durable() >= seq {
		t.Fatalf("event %d is on record before the held commit returned", seq)
	}
	if w.Accepted(seq + 1) {
		t.Fatalf("Accepted(%d) = true for an event never added", seq+1)
	}
	release()
	<-w.Failed()
	if w.Accepted(seq) {
		t.Fatalf("Accepted(%d) = true after the commit failed", seq)
	}
}

// TestAcceptedIsFalseAfterStop checks that an event added after Stop, which
// is never committed, is not accepted.
func TestAcceptedIsFalseAfterStop(t *testing.T) {
	ctx := ctxT(t)
	w := startWriter(t, NewMemory(), 0, WriterOptions{})
	e := newEngine(w, 0)
	_, err := e.do(ctx)
	must(t, err)
	must(t, w.Stop(ctx))
	e.mu.Lock()
	w.Add(entry{seq: 2})
	e.mu.Unlock()
	if w.Accepted(2) {
		t.Fatal("Accepted(2) = true for an event added after Stop")
	}
}
