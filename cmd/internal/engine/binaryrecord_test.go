package engine

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// writeBinaryRecord rewrites the fixture of TestBinaryRecordStillLoads. Run
// it only when the binary form is meant to change, which breaks every
// record on disk.
var writeBinaryRecord = flag.Bool("write-binary-record", false, "rewrite testdata/record-binary from a random history")

// binaryRecordDir holds a record written in the first binary form: a
// mid-run snapshot, the events after it (each after its length as a
// uvarint), and, as JSON, the state that restoring the one and replaying
// the others gave then.
var binaryRecordDir = filepath.Join("testdata", "record-binary")

// TestBinaryRecordStillLoads restores the binary snapshot, replays the
// binary events and checks that the state is the one the code that wrote
// them got.
func TestBinaryRecordStillLoads(t *testing.T) {
	if *writeBinaryRecord {
		writeBinaryRecordFixture(t)
	}
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(binaryRecordDir, name))
		must(t, err)
		return data
	}
	snap := read("snapshot.bin")
	if snap[0] != binaryMark {
		t.Fatalf("the fixture's snapshot starts with %#x, not the binary mark", snap[0])
	}
	st, err := DecodeSnapshot(snap)
	must(t, err)
	e, err := Restore(Options{Clock: newFakeClock()}, st)
	must(t, err)
	n := 0
	for rest := read("events.bin"); len(rest) > 0; n++ {
		size, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < size {
			t.Fatalf("events.bin is cut after %d events", n)
		}
		ev, err := DecodeEvent(rest[k : k+int(size)])
		must(t, err)
		if err := e.Replay(ev); err != nil {
			t.Fatalf("replay event %d (%s): %v", ev.Seq, ev.Kind, err)
		}
		rest = rest[k+int(size):]
	}
	want, err := DecodeSnapshot(read("state.json"))
	must(t, err)
	if got := untimedMemory(e.Dump()); !equalSnapshots(got, want) {
		t.Fatalf("the binary record restores to another state:\n%s", diffSnapshots(got, want))
	}
	if n < 100 || len(st.Nodes) < 20 {
		t.Fatalf("the fixture holds %d events after a snapshot of %d nodes: too little to test", n, len(st.Nodes))
	}
}

// writeBinaryRecordFixture runs a random history and writes its mid-run
// snapshot, the events after it, and the state they restore to.
func writeBinaryRecordFixture(t *testing.T) {
	h := newHistory(t, 15)
	h.run(1200)
	must(t, os.MkdirAll(binaryRecordDir, 0o755))
	snap, err := h.mid.Encode()
	must(t, err)
	var events []byte
	e, err := Restore(Options{Clock: h.clock}, h.mid)
	must(t, err)
	for _, ev := range h.rec.events {
		if ev.Seq <= h.mid.Seq {
			continue
		}
		data, err := ev.Encode()
		must(t, err)
		events = append(binary.AppendUvarint(events, uint64(len(data))), data...)
		must(t, e.Replay(ev))
	}
	state, err := json.Marshal(e.Dump())
	must(t, err)
	for name, data := range map[string][]byte{"snapshot.bin": snap, "events.bin": events, "state.json": state} {
		must(t, os.WriteFile(filepath.Join(binaryRecordDir, name), data, 0o644))
	}
}
