package engine

import (
	"fmt"
	"testing"
	"time"
)

// TestCaptureInPartsWhileOthersChange checks that a capture copies in parts
// of at most captureChunk changes, other calls changing the tree between
// two parts (nodes created, charged, cancelled and removed, leases granted
// and released, tombstones forgotten), and that the image it makes is the
// engine at the capture's seq: restored and given the events after it, it
// is the live engine.
func TestCaptureInPartsWhileOthersChange(t *testing.T) {
	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention, set.TombstoneTTL = time.Second, time.Second
	must(t, f.e.Configure(f.sys(), set))
	tenant := f.tenant(Spec{Name: "t", Limits: map[string]int64{"db": 1000}})
	s := f.session(tenant, time.Hour)
	img := NewImage(nil)
	img.Apply(f.e.Capture())
	var ids []ID
	for i := range 3000 {
		ids = append(ids, f.create(s, tenant, Spec{Name: fmt.Sprint("c", i)}))
	}
	f.e.captureChunk = 16
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := &Call{Session: s}
		for i := range 400 {
			inf, err := f.e.Create(c, tenant, Spec{Name: fmt.Sprint("late", i)})
			if err != nil {
				t.Error(err)
				return
			}
			l, _, err := f.e.Acquire(c, inf.ID, "db", 0)
			if err == nil {
				err = f.e.Consume(c, inf.ID, "http", 1)
			}
			if err == nil {
				_, err = f.e.Release(c, l.ID, Report{})
			}
			if err == nil {
				err = f.e.Cancel(c, ids[i])
			}
			if err == nil && i%2 == 0 {
				err = f.e.Cancel(c, inf.ID) // removed later in the capture, perhaps after a part copied it
			}
			if err != nil {
				t.Error(err)
				return
			}
			if i%40 == 0 {
				f.clock.Advance(2 * time.Second)
				f.e.Reap(f.sys())
			}
		}
	}()
	d := f.e.Capture()
	<-done
	parts := 0
	for p := d; p != nil; p = p.then {
		if n := len(p.Nodes) + len(p.NodesGone) + len(p.Sessions) + len(p.SessionsGone) + len(p.Leases) + len(p.Tombs) + len(p.LeasesGone); n > 16*2 {
			t.Fatalf("part %d copied %d records for 16 listed changes", parts, n)
		}
		parts++
	}
	if parts < 3000/16 {
		t.Fatalf("a capture of 3000 changed nodes took %d parts; want at least %d", parts, 3000/16)
	}
	img.Apply(d)
	r, err := Restore(Options{Clock: f.clock, Sink: &recorder{}}, img.Snapshot())
	must(t, err)
	for _, ev := range f.rec.events {
		if ev.Seq > img.Seq() {
			must(t, r.Replay(ev))
		}
	}
	now := f.clock.Now().UnixNano()
	if got, want := visible(r.Dump(), now), visible(f.e.Dump(), now); !equalSnapshots(got, want) {
		t.Fatalf("the image at seq %d and the events after it differ from the engine:\n%s", img.Seq(), diffSnapshots(got, want))
	}
}
