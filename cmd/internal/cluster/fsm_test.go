package cluster

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestReplicasFedTheSameLogEndIdentical(t *testing.T) {
	for seed := range uint64(4) {
		a, b := NewFSM(), NewFSM()
		log := drive(t, a, newWorkload(seed), 1, 3000)
		feed(b, 1, log)
		if sa, sb := Checksum(a.Engine()), Checksum(b.Engine()); sa != sb {
			t.Fatalf("seed %d: checksums differ: %x and %x", seed, sa, sb)
		}
		if !reflect.DeepEqual(a.Engine().Dump(), b.Engine().Dump()) {
			t.Fatalf("seed %d: dumps differ", seed)
		}
		if a.Engine().Seq() < 1000 {
			t.Fatalf("seed %d: the workload made only %d events; it should exercise the engine", seed, a.Engine().Seq())
		}
	}
}

func TestApplyUsesTheCommandsTimeNotTheClock(t *testing.T) {
	f := NewFSM()
	at := time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	c := &Command{Op: OpOpenSession, Target: 1, Span: time.Minute, Token: [32]byte{1}, Now: at.UnixNano()}
	r := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: c.Encode()}).(*Result)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if want := at.Add(time.Minute).UnixNano(); r.Session.Expires != want {
		t.Fatalf("session expires at %d, want %d (the command's time plus its ttl)", r.Session.Expires, want)
	}
	back := &Command{Op: OpOpenSession, Target: 1, Span: time.Minute, Token: [32]byte{2}, Now: at.Add(-time.Hour).UnixNano()}
	r = f.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: back.Encode()}).(*Result)
	if want := at.Add(time.Minute).UnixNano(); r.Session.Expires != want {
		t.Fatalf("a stamp earlier than the last command's applied at %d, want the last time %d", r.Session.Expires-int64(time.Minute), at.UnixNano())
	}
}

func TestCorruptCommandAppliesNothing(t *testing.T) {
	f := NewFSM()
	before := Checksum(f.Engine())
	r := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: []byte{0xff}}).(*Result)
	if r.Err == nil {
		t.Fatal("a corrupt command applied without an error")
	}
	if Checksum(f.Engine()) != before {
		t.Fatal("a corrupt command changed the state")
	}
}

// sinkBuffer is a raft.SnapshotSink over a buffer.
type sinkBuffer struct{ bytes.Buffer }

func (*sinkBuffer) ID() string    { return "test" }
func (*sinkBuffer) Cancel() error { return nil }
func (*sinkBuffer) Close() error  { return nil }

func persist(t *testing.T, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink sinkBuffer
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	return sink.Bytes()
}

// TestSnapshotRestoreMatchesTheReplicaThatTookIt takes snapshots more than
// once (the later ones only fold changes into the image), restores a fresh
// replica from the last, and feeds both the rest of the log: they must stay
// identical, sessions' lapse times included (heartbeats are in no event).
func TestSnapshotRestoreMatchesTheReplicaThatTookIt(t *testing.T) {
	a, b := NewFSM(), NewFSM()
	w := newWorkload(9)
	drive(t, a, w, 1, 800)
	persist(t, a)
	drive(t, a, w, 801, 800)
	raw := persist(t, a)
	if err := b.Restore(io.NopCloser(bytes.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	if sa, sb := Checksum(a.Engine()), Checksum(b.Engine()); sa != sb {
		t.Fatalf("restored replica differs at once: %x and %x", sa, sb)
	}
	w.queued = nil // queued acquires are in no snapshot (see FSM.Restore)
	rest := drive(t, a, w, 1601, 1500)
	feed(b, 1601, rest)
	if sa, sb := Checksum(a.Engine()), Checksum(b.Engine()); sa != sb {
		t.Fatalf("restored replica diverged on the rest of the log: %x and %x", sa, sb)
	}
}

func TestRestoreRefusesACorruptSnapshot(t *testing.T) {
	f := NewFSM()
	drive(t, f, newWorkload(3), 1, 100)
	before := Checksum(f.Engine())
	raw := persist(t, f)
	for name, data := range map[string][]byte{"empty": nil, "truncated": raw[:len(raw)/2], "bad header": {3, 1, 2, 3}} {
		if err := f.Restore(io.NopCloser(bytes.NewReader(data))); err == nil {
			t.Errorf("%s: restore took a corrupt snapshot", name)
		}
	}
	if Checksum(f.Engine()) != before {
		t.Fatal("a refused restore changed the state")
	}
}
