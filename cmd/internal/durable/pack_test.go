package durable

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
)

// storedSnapshot reads the newest snapshot straight from the record at url.
func storedSnapshot(t *testing.T, url string) eventlog.Snapshot {
	t.Helper()
	b, err := eventlog.Open(context.Background(), url, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var snap *eventlog.Snapshot
	err = b.Load(context.Background(), func(s *eventlog.Snapshot) error { snap = s; return nil }, func(eventlog.Record) error { return nil })
	if err != nil || snap == nil {
		t.Fatalf("load snapshot: %v %v", snap, err)
	}
	return *snap
}

// saveSnapshot replaces the newest snapshot at url with snap.
func saveSnapshot(t *testing.T, url string, snap eventlog.Snapshot) {
	t.Helper()
	b, err := eventlog.Open(context.Background(), url, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	must(t, b.SaveSnapshot(context.Background(), snap))
}

// TestSnapshotsAreStoredCompressed: a saved snapshot is gzip, smaller than
// its encoding; one stored uncompressed (as before compression) loads
// just the same; a damaged one is refused as corrupt.
func TestSnapshotsAreStoredCompressed(t *testing.T) {
	forEachBackend(t, func(t *testing.T, url string) {
		clk := newClock()
		ctx := context.Background()
		s := open(t, url, clk, math.MaxInt64)
		workload(t, s, clk, 1)
		must(t, s.SnapshotNow(ctx))
		want := s.Engine.Dump()
		must(t, s.Close(ctx))

		stored := storedSnapshot(t, url)
		raw, err := unpack(stored.Data)
		must(t, err)
		if !bytes.HasPrefix(stored.Data, gzipMagic) || len(stored.Data) >= len(raw) {
			t.Fatalf("stored snapshot: %d bytes (gzip: %v) for an encoding of %d", len(stored.Data), bytes.HasPrefix(stored.Data, gzipMagic), len(raw))
		}

		for _, tc := range []struct {
			name string
			data []byte
			err  error
		}{
			{"uncompressed", raw, nil},
			{"compressed", stored.Data, nil},
			{"truncated", stored.Data[:len(stored.Data)-9], engine.ErrCorrupt},
			{"flipped byte", flip(stored.Data, len(stored.Data)/2), engine.ErrCorrupt},
		} {
			saveSnapshot(t, url, eventlog.Snapshot{Seq: stored.Seq, Time: stored.Time, Data: tc.data})
			s, err := Open(ctx, Options{URL: url, Clock: clk, Logger: quiet()})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("%s: open gave %v, want %v", tc.name, err, tc.err)
				}
				continue
			}
			must(t, err)
			if got := s.Engine.Dump(); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: restored state differs:\n got %+v\nwant %+v", tc.name, got, want)
			}
			must(t, s.Close(ctx))
		}
	})
}

func flip(data []byte, i int) []byte {
	out := bytes.Clone(data)
	out[i] ^= 0xff
	return out
}
