package engine

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// writeJSONRecord rewrites the fixture of TestJSONRecordStillLoads. Only the
// code that stored records as JSON may write it.
var writeJSONRecord = flag.Bool("write-json-record", false, "rewrite testdata/record-json from a random history")

// jsonRecordDir holds a record written while snapshots and events were
// stored as JSON: a mid-run snapshot, the events after it (one a line), and
// the state that restoring the one and replaying the others gave then.
var jsonRecordDir = filepath.Join("testdata", "record-json")

// TestJSONRecordStillLoads restores the JSON snapshot, replays the JSON
// events and checks that the state is the one the code that wrote them got.
func TestJSONRecordStillLoads(t *testing.T) {
	if *writeJSONRecord {
		writeJSONRecordFixture(t)
	}
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(jsonRecordDir, name))
		must(t, err)
		return data
	}
	st, err := DecodeSnapshot(read("snapshot.json"))
	must(t, err)
	e, err := Restore(Options{Clock: newFakeClock()}, st)
	must(t, err)
	lines := bytes.Split(bytes.TrimSpace(read("events.jsonl")), []byte("\n"))
	for _, line := range lines {
		ev, err := DecodeEvent(line)
		must(t, err)
		if err := e.Replay(ev); err != nil {
			t.Fatalf("replay event %d (%s): %v", ev.Seq, ev.Kind, err)
		}
	}
	want, err := DecodeSnapshot(read("state.json"))
	must(t, err)
	if got := untimedMemory(e.Dump()); !equalSnapshots(got, want) {
		t.Fatalf("the JSON record restores to another state:\n%s", diffSnapshots(got, want))
	}
	if len(lines) < 100 || len(st.Nodes) < 20 {
		t.Fatalf("the fixture holds %d events after a snapshot of %d nodes: too little to test", len(lines), len(st.Nodes))
	}
}

// writeJSONRecordFixture runs a random history and writes its mid-run
// snapshot, the events after it, and the state they restore to.
func writeJSONRecordFixture(t *testing.T) {
	h := newHistory(t, 15)
	h.run(1200)
	must(t, os.MkdirAll(jsonRecordDir, 0o755))
	snap, err := h.mid.Encode()
	must(t, err)
	var events bytes.Buffer
	e, err := Restore(Options{Clock: h.clock}, h.mid)
	must(t, err)
	for _, ev := range h.rec.events {
		if ev.Seq <= h.mid.Seq {
			continue
		}
		data, err := ev.Encode()
		must(t, err)
		events.Write(append(data, '\n'))
		must(t, e.Replay(ev))
	}
	state, err := e.Dump().Encode()
	must(t, err)
	for name, data := range map[string][]byte{"snapshot.json": snap, "events.jsonl": events.Bytes(), "state.json": state} {
		must(t, os.WriteFile(filepath.Join(jsonRecordDir, name), data, 0o644))
	}
}
