package engine

import (
	"testing"
	"time"
)

// TestCaptureAfterRestore starts an image from a snapshot, as a restarted
// daemon does, and finds that a capture of the restored engine tells it of
// everything that went since: an ended lease's tombstone, a removed node,
// a forgotten key.
func TestCaptureAfterRestore(t *testing.T) {
	w := keyIdleWorld(t, time.Second)
	set := w.e.Settings()
	set.TombstoneTTL, set.NodeRetention = time.Second, time.Second
	must(t, w.e.Configure(w.sys(), set))
	if _, err, _ := w.hit(w.limit("account:1", Rate{Limit: 5, Period: time.Second}), 1, ConsumeOptions{}); err != nil {
		t.Fatal(err)
	}
	s := w.session(w.tenant, time.Hour)
	run := w.create(s, w.tenant, Spec{Name: "run"})
	l, _ := w.acquire(s, run, "db")
	if _, err := w.e.Release(&Call{Session: s}, l.ID, Report{}); err != nil {
		t.Fatal(err)
	}
	must(t, w.e.Cancel(w.sys(), run))
	st := w.e.Dump()
	if len(st.Tombs) != 1 {
		t.Fatalf("the snapshot has %d tombstones, want the released lease's", len(st.Tombs))
	}
	e, err := Restore(Options{Clock: w.clock}, st)
	must(t, err)
	img := NewImage(st)
	w.clock.Advance(time.Minute)
	if e.Reap(w.sys()) == 0 {
		t.Fatal("the reaper found nothing to do")
	}
	img.Apply(e.Capture())
	if got, want := img.Snapshot(), e.Dump(); !equalSnapshots(got, want) {
		t.Fatalf("the image differs from the restored engine:\n%s", diffSnapshots(got, want))
	}
}
