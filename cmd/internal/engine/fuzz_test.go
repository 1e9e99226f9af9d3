package engine

import (
	"errors"
	"testing"
)

// seedHistory returns the events and final snapshot of a short random
// history, as fuzz seeds.
func seedHistory(t testing.TB) ([]*Event, *Snapshot) {
	h := newHistory(t.(*testing.T), 1)
	h.run(60)
	h.image.Apply(h.e.Capture())
	return h.rec.events, h.image.Snapshot()
}

// FuzzDecodeSnapshot feeds damaged snapshots to the restore path: each is
// refused with ErrCorrupt or restores to an engine that keeps every
// invariant; none panics.
func FuzzDecodeSnapshot(f *testing.F) {
	_, st := seedHistory(&testing.T{})
	data, err := st.Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"seq":1,"next":2,"nodes":[{"id":1,"name":"root"}]}`))
	f.Add([]byte(`{"nodes":[{"id":1},{"id":2,"parent":7}]}`))
	f.Add([]byte(`{"seq":1,"next":2,"nodes":[{"id":1,"name":"root","res":{"http":null}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeSnapshot(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error is not ErrCorrupt: %v", err)
			}
			return
		}
		e, err := Restore(Options{Clock: newFakeClock()}, st)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("restore error is not ErrCorrupt: %v", err)
			}
			return
		}
		if err := checkState(e); err != nil {
			t.Fatalf("a snapshot restored into a broken engine: %v", err)
		}
	})
}

// FuzzReplay applies damaged events to a restored engine: each is applied,
// or refused with ErrCorrupt; the engine never panics, and while it keeps
// accepting events it keeps every invariant.
func FuzzReplay(f *testing.F) {
	events, _ := seedHistory(&testing.T{})
	for _, ev := range events[:min(len(events), 60)] {
		data, err := ev.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := DecodeEvent(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error is not ErrCorrupt: %v", err)
			}
			return
		}
		e := New(Options{Clock: newFakeClock()})
		prefix := events[:min(len(events), 40)]
		for _, p := range prefix {
			if err := e.Replay(p); err != nil {
				t.Fatal(err)
			}
		}
		ev.Seq = e.Seq() + 1
		if ev.Time < prefix[len(prefix)-1].Time {
			ev.Time = prefix[len(prefix)-1].Time
		}
		if err := e.Replay(ev); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("replay error is not ErrCorrupt: %v", err)
			}
			return
		}
		if err := checkState(e); err != nil {
			t.Fatalf("event %s left a broken engine: %v", ev.Kind, err)
		}
	})
}
