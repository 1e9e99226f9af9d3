package eventlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"", "sqlite:x.db", "sqlite:", "sqlite://x", "postgres://u:p@h/d", "postgresql://", "mysql://a", "\x00", "sqlite:a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		kind, target, err := parseURL(url)
		if err != nil {
			if !errors.Is(err, ErrURL) {
				t.Fatalf("parseURL(%q) = %v, want ErrURL", url, err)
			}
			return
		}
		switch kind {
		case kindMemory:
			if url != "" {
				t.Fatalf("parseURL(%q) chose memory", url)
			}
		case kindSQLite:
			if "sqlite:"+target != url || target == "" {
				t.Fatalf("parseURL(%q) chose sqlite file %q", url, target)
			}
		case kindPostgres:
			if target != url || !strings.HasPrefix(url, "postgres") {
				t.Fatalf("parseURL(%q) chose postgres %q", url, target)
			}
		}
	})
}

// row is a stored row as the fuzzers write it: 17 bytes of seq, time and
// data length, then the data.
type row struct {
	seq, time int64
	data      []byte
}

// rows cuts fuzz input into rows.
func rows(in []byte) []row {
	var out []row
	for len(in) >= 17 {
		r := row{seq: int64(binary.LittleEndian.Uint64(in)), time: int64(binary.LittleEndian.Uint64(in[8:]))}
		n := min(int(in[16]), len(in)-17)
		r.data, in = in[17:17+n], in[17+n:]
		out = append(out, r)
	}
	return out
}

func seedRows(f *testing.F) {
	enc := func(rs ...row) []byte {
		var b []byte
		for _, r := range rs {
			b = binary.LittleEndian.AppendUint64(b, uint64(r.seq))
			b = binary.LittleEndian.AppendUint64(b, uint64(r.time))
			b = append(b, byte(len(r.data)))
			b = append(b, r.data...)
		}
		return b
	}
	f.Add(false, int64(0), []byte{})
	f.Add(false, int64(0), enc(row{1, 5, []byte("a")}, row{2, 6, nil}, row{3, 7, []byte("ccc")}))
	f.Add(true, int64(4), enc(row{5, 1, []byte("x")}, row{6, 1, nil}))
	f.Add(true, int64(4), enc(row{6, 1, []byte("gap")}))
	f.Add(false, int64(0), enc(row{-1, 0, nil}))
	f.Add(true, int64(-3), enc(row{1, 0, nil}))
	f.Add(true, int64(1<<62), enc(row{1<<62 + 1, 0, nil}))
}

// checkRead checks what reading stored rows gave: either an ErrCorrupt, or
// the snapshot and every row after it, contiguous and unchanged.
func checkRead(t *testing.T, hasSnap bool, snapSeq int64, stored []row, snap *Snapshot, got []Record, err error) {
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v, want ErrCorrupt", err)
		}
		return
	}
	next := uint64(1)
	if hasSnap {
		if snap == nil || snap.Seq != uint64(snapSeq) {
			t.Fatalf("snapshot %+v, want one at %d", snap, snapSeq)
		}
		next = snap.Seq + 1
	}
	for i, r := range got {
		if r.Seq != next+uint64(i) {
			t.Fatalf("record %d has seq %d, want %d", i, r.Seq, next+uint64(i))
		}
	}
	var want int
	for _, r := range stored {
		if r.seq >= 0 && uint64(r.seq) >= next {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("read %d records of the %d stored after the snapshot", len(got), want)
	}
}

// FuzzReader feeds the row checker what a damaged table could hold.
func FuzzReader(f *testing.F) {
	seedRows(f)
	f.Fuzz(func(t *testing.T, hasSnap bool, snapSeq int64, in []byte) {
		stored := rows(in)
		var r reader
		snap, err := r.snapshot(hasSnap, snapSeq, 0, nil)
		var got []Record
		for _, row := range stored {
			if err != nil {
				break
			}
			if row.seq >= 0 && uint64(row.seq) < r.next {
				continue // what Load's query leaves out
			}
			var rec Record
			if rec, err = r.record(row.seq, row.time, row.data); err == nil {
				got = append(got, rec)
			}
		}
		checkRead(t, hasSnap, snapSeq, stored, snap, got, err)
	})
}

// FuzzLoadSQLite writes arbitrary rows straight into a SQLite store's
// tables, then loads them: damage gives ErrCorrupt, never a panic or a
// record with a hole.
func FuzzLoadSQLite(f *testing.F) {
	seedRows(f)
	b := openURL(f, backendCases[1].newURL(f)).(*SQLite)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, hasSnap bool, snapSeq int64, in []byte) {
		stored := rows(in)
		_, err := b.db.ExecContext(ctx, "DELETE FROM events; DELETE FROM snapshots")
		must(t, err)
		seen := map[int64]bool{}
		for _, r := range stored {
			if seen[r.seq] {
				continue
			}
			seen[r.seq] = true
			_, err := b.db.ExecContext(ctx, "INSERT INTO events (seq, time, data) VALUES (?, ?, ?)", r.seq, r.time, nonNil(r.data))
			must(t, err)
		}
		if hasSnap {
			_, err := b.db.ExecContext(ctx, "INSERT INTO snapshots (seq, time, data) VALUES (?, 0, ?)", snapSeq, []byte("s"))
			must(t, err)
		}
		var snap *Snapshot
		var got []Record
		err = b.Load(ctx, func(s *Snapshot) error { snap = s; return nil }, func(r Record) error {
			got = append(got, r)
			return nil
		})
		var unique []row
		for _, r := range stored {
			if seen[r.seq] {
				unique = append(unique, r)
				delete(seen, r.seq)
			}
		}
		checkRead(t, hasSnap, snapSeq, unique, snap, got, err)
		for _, rec := range got {
			for _, r := range unique {
				if r.seq == int64(rec.Seq) && (r.time != rec.Time || !bytes.Equal(r.data, rec.Data)) {
					t.Fatalf("event %d came back as (%d, %q), stored as (%d, %q)", rec.Seq, rec.Time, rec.Data, r.time, r.data)
				}
			}
		}
	})
}
