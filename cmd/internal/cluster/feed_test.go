package cluster

import (
	"bytes"
	"io"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// fedRecord is a Fed that keeps the sequence numbers it is given.
type fedRecord struct {
	loads  []*engine.Engine
	loaded uint64   // the sequence number of the last engine loaded
	seqs   []uint64 // every event fed, in the order fed
	behind int      // events fed before their engine had applied them
}

func (r *fedRecord) Load(e *engine.Engine) {
	r.loads = append(r.loads, e)
	r.loaded = e.Seq()
}

func (r *fedRecord) Applied(evs []*engine.Event) {
	e := r.loads[len(r.loads)-1]
	for _, ev := range evs {
		if ev.Seq > e.Seq() {
			r.behind++
		}
		r.seqs = append(r.seqs, ev.Seq)
	}
}

// A Fed set on a replica that has applied commands already reads its
// engine, then gets every later event once, in order, as soon as its
// command applied: from the one after what it read to the engine's last.
func TestFeedHandsOverEveryEventOnceInOrder(t *testing.T) {
	f := NewFSM()
	w := newWorkload(7)
	drive(t, f, w, 1, 300)
	rec := &fedRecord{}
	f.Feed(rec)
	for i := range uint64(700) {
		drive(t, f, w, 301+i, 1)
		if seq := f.Engine().Seq(); seq > rec.loaded && (len(rec.seqs) == 0 || rec.seqs[len(rec.seqs)-1] != seq) {
			t.Fatalf("after command %d the engine is at event %d, and the Fed got %d events; want every event fed once its command applied", 301+i, seq, len(rec.seqs))
		}
	}
	if rec.loaded == 0 || len(rec.loads) != 1 {
		t.Fatalf("Feed loaded %d engines at sequence %d, want one, at the events applied so far", len(rec.loads), rec.loaded)
	}
	if len(rec.seqs) == 0 || rec.seqs[0] != rec.loaded+1 {
		t.Fatalf("the first event fed is %v, want %d, the one after what was loaded", rec.seqs[:min(1, len(rec.seqs))], rec.loaded+1)
	}
	for i := 1; i < len(rec.seqs); i++ {
		if rec.seqs[i] != rec.seqs[i-1]+1 {
			t.Fatalf("event %d followed event %d", rec.seqs[i], rec.seqs[i-1])
		}
	}
	if last := rec.seqs[len(rec.seqs)-1]; last != f.Engine().Seq() {
		t.Fatalf("the last event fed is %d, want the engine's last, %d", last, f.Engine().Seq())
	}
	if rec.behind != 0 {
		t.Fatalf("%d events were fed before their engine had them", rec.behind)
	}
}

// A snapshot that replaces a replica's engine gives the Fed the new engine
// to load from, and the events after it come from that engine.
func TestFeedLoadsTheRestoredEngine(t *testing.T) {
	a, b := NewFSM(), NewFSM()
	w := newWorkload(8)
	drive(t, a, w, 1, 400)
	next := uint64(401)
	raw := persist(t, a)
	rec := &fedRecord{}
	b.Feed(rec)
	if err := b.Restore(io.NopCloser(bytes.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	if len(rec.loads) != 2 || rec.loads[1] != b.Engine() || rec.loaded != a.Engine().Seq() {
		t.Fatalf("after a restore the Fed loaded %d engines, the last at sequence %d; want the restored engine at %d", len(rec.loads), rec.loaded, a.Engine().Seq())
	}
	feed(b, next, drive(t, a, w, next, 200))
	if len(rec.seqs) == 0 {
		t.Fatal("the restored replica fed no events")
	}
	if first, last := rec.seqs[0], rec.seqs[len(rec.seqs)-1]; first != rec.loaded+1 || last != b.Engine().Seq() {
		t.Fatalf("after the restore the Fed got events %d to %d, want %d to %d", first, last, rec.loaded+1, b.Engine().Seq())
	}
}
