package eventlog

import (
	"bytes"
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

// testBackend runs the contract every Backend keeps against fresh stores
// that bc makes.
func testBackend(t *testing.T, bc backendCase) {
	cases := []struct {
		name string
		run  func(t *testing.T, bc backendCase)
	}{
		{"Empty", testEmpty},
		{"AppendLoadOrder", testAppendLoadOrder},
		{"AppendRefusesGaps", testAppendRefusesGaps},
		{"SnapshotDeletesCoveredKeepsLater", testSnapshotDeletesCovered},
		{"SnapshotRules", testSnapshotRules},
		{"EmptyData", testEmptyData},
		{"LoadStopsAtCallbackError", testLoadStopsAtCallbackError},
		{"ConcurrentAppendAndSnapshot", testConcurrentAppendAndSnapshot},
		{"ReopenPersists", testReopenPersists},
		{"StreamSnapshot", testStreamSnapshot},
		{"StreamSnapshotFails", testStreamSnapshotFails},
		{"StreamSnapshotChunkLost", testStreamSnapshotChunkLost},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, bc)
		})
	}
}

func TestBackends(t *testing.T) {
	for _, bc := range backendCases {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			testBackend(t, bc)
		})
	}
}

func testEmpty(t *testing.T, bc backendCase) {
	b := openURL(t, bc.newURL(t))
	if l := load(t, b); l.snap != nil || len(l.recs) != 0 {
		t.Fatalf("empty store loaded snapshot %v and %d records", l.snap, len(l.recs))
	}
}

func testAppendLoadOrder(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	b := openURL(t, bc.newURL(t))
	for _, span := range [][2]uint64{{1, 3}, {4, 4}, {5, 300}, {301, 310}} {
		if err := b.Append(ctx, records(span[0], span[1])); err != nil {
			t.Fatalf("Append %v: %v", span, err)
		}
	}
	checkLoad(t, load(t, b), 0, 310)
}

// checkLoad checks that l is a snapshot at snap (none if 0) and events
// snap+1..last, each with the data its number calls for.
func checkLoad(t testing.TB, l loaded, snap, last uint64) {
	t.Helper()
	switch {
	case snap == 0 && l.snap != nil:
		t.Fatalf("loaded a snapshot at %d, want none", l.snap.Seq)
	case snap != 0 && l.snap == nil:
		t.Fatalf("loaded no snapshot, want one at %d", snap)
	case snap != 0 && (l.snap.Seq != snap || !bytes.Equal(l.snap.Data, snapshotData(snap)) || l.snap.Time != eventTime(snap)):
		t.Fatalf("loaded snapshot %d %q, want %d %q", l.snap.Seq, l.snap.Data, snap, snapshotData(snap))
	}
	if uint64(len(l.recs)) != last-snap {
		t.Fatalf("loaded %d records, want %d (%d..%d)", len(l.recs), last-snap, snap+1, last)
	}
	for i, r := range l.recs {
		want := snap + 1 + uint64(i)
		if r.Seq != want || r.Time != eventTime(want) || !bytes.Equal(r.Data, eventData(want)) {
			t.Fatalf("record %d is (%d, %d, %q), want event %d", i, r.Seq, r.Time, r.Data, want)
		}
	}
}

func snapshotAt(seq uint64) Snapshot {
	return Snapshot{Seq: seq, Time: eventTime(seq), Data: snapshotData(seq)}
}

func testAppendRefusesGaps(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	b := openURL(t, bc.newURL(t))
	if err := b.Append(ctx, nil); err != nil {
		t.Fatalf("Append of nothing: %v", err)
	}
	if err := b.Append(ctx, records(1, 2)); err != nil {
		t.Fatal(err)
	}
	bad := map[string][]Record{
		"gap":              records(4, 5),
		"repeat":           records(2, 3),
		"hole inside":      {records(3, 3)[0], records(5, 5)[0]},
		"past a signed 64": {{Seq: math.MaxInt64 + 1}},
	}
	for name, recs := range bad {
		if err := b.Append(ctx, recs); !errors.Is(err, ErrSequence) {
			t.Errorf("Append(%s) = %v, want ErrSequence", name, err)
		}
	}
	checkLoad(t, load(t, b), 0, 2)
	if err := b.Append(ctx, records(3, 3)); err != nil {
		t.Fatalf("Append after refusals: %v", err)
	}
}

func testSnapshotDeletesCovered(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	b := openURL(t, bc.newURL(t))
	must(t, b.Append(ctx, records(1, 10)))
	must(t, b.SaveSnapshot(ctx, snapshotAt(6)))
	checkLoad(t, load(t, b), 6, 10)
	must(t, b.Append(ctx, records(11, 12)))
	must(t, b.SaveSnapshot(ctx, snapshotAt(12)))
	checkLoad(t, load(t, b), 12, 12)
	must(t, b.Append(ctx, records(13, 14)))
	checkLoad(t, load(t, b), 12, 14)
	checkRows(t, b, 2, 1)
}

// checkRows checks how many event and snapshot rows a SQL store holds: a
// snapshot leaves nothing it covers behind.
func checkRows(t *testing.T, b Backend, events, snapshots int) {
	t.Helper()
	var ev, sn int
	var err error
	switch b := b.(type) {
	case *SQLite:
		err = b.db.QueryRow("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM snapshots)").Scan(&ev, &sn)
	case *Postgres:
		err = b.pool.QueryRow(context.Background(), "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM snapshots)").Scan(&ev, &sn)
	case *Memory:
		b.mu.Lock()
		ev, sn = len(b.events), 0
		if b.snap != nil {
			sn = 1
		}
		b.mu.Unlock()
	}
	if err != nil || ev != events || sn != snapshots {
		t.Fatalf("store holds %d events and %d snapshots (err %v), want %d and %d", ev, sn, err, events, snapshots)
	}
}

func testSnapshotRules(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	b := openURL(t, bc.newURL(t))
	must(t, b.SaveSnapshot(ctx, snapshotAt(0)))
	if err := b.SaveSnapshot(ctx, snapshotAt(1)); !errors.Is(err, ErrSequence) {
		t.Fatalf("snapshot ahead of the record: %v, want ErrSequence", err)
	}
	must(t, b.Append(ctx, records(1, 5)))
	must(t, b.SaveSnapshot(ctx, snapshotAt(4)))
	if err := b.SaveSnapshot(ctx, snapshotAt(3)); !errors.Is(err, ErrSequence) {
		t.Fatalf("snapshot older than the newest: %v, want ErrSequence", err)
	}
	replace := snapshotAt(4)
	replace.Time++
	must(t, b.SaveSnapshot(ctx, replace))
	l := load(t, b)
	if l.snap == nil || l.snap.Time != replace.Time {
		t.Fatalf("a snapshot at the same number did not replace the old one: %+v", l.snap)
	}
	if err := b.Append(ctx, records(5, 5)); !errors.Is(err, ErrSequence) {
		t.Fatalf("Append of an event the record holds: %v, want ErrSequence", err)
	}
	must(t, b.Append(ctx, records(6, 6)))
	checkRows(t, b, 2, 1)
}

func testEmptyData(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	b := openURL(t, bc.newURL(t))
	must(t, b.Append(ctx, []Record{{Seq: 1}, {Seq: 2, Data: []byte{}}}))
	must(t, b.SaveSnapshot(ctx, Snapshot{Seq: 1}))
	l := load(t, b)
	if l.snap.Data == nil || len(l.snap.Data) != 0 || len(l.recs) != 1 || l.recs[0].Data == nil || len(l.recs[0].Data) != 0 {
		t.Fatalf("empty data came back as %q and %+v, want empty non-nil slices", l.snap.Data, l.recs)
	}
}

func testLoadStopsAtCallbackError(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	b := openURL(t, bc.newURL(t))
	must(t, b.Append(ctx, records(1, 5)))
	stop := errors.New("enough")
	var seen int
	err := b.Load(ctx, func(*Snapshot) error { return nil }, func(Record) error {
		seen++
		if seen == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 2 {
		t.Fatalf("Load after replay failed at 2: err %v, %d replayed", err, seen)
	}
	if err := b.Load(ctx, func(*Snapshot) error { return stop }, nil); !errors.Is(err, stop) {
		t.Fatalf("Load after restore failed: %v", err)
	}
}

// testConcurrentAppendAndSnapshot appends in batches while another goroutine
// saves snapshots of what is on record: the record never has a hole.
func testConcurrentAppendAndSnapshot(t *testing.T, bc backendCase) {
	ctx := ctxT(t)
	b := openURL(t, bc.newURL(t))
	const last = 2000
	var onRecord atomic.Uint64
	var wg sync.WaitGroup
	var appendErr, snapErr error
	wg.Go(func() {
		for from := uint64(1); from <= last; from += 37 {
			to := min(from+36, last)
			if appendErr = b.Append(ctx, records(from, to)); appendErr != nil {
				return
			}
			onRecord.Store(to)
		}
	})
	wg.Go(func() {
		var snaps int
		for done := uint64(0); done < last; {
			done = onRecord.Load()
			if snapErr = b.SaveSnapshot(ctx, snapshotAt(done)); snapErr != nil {
				return
			}
			snaps++
		}
		t.Logf("%d snapshots", snaps)
	})
	wg.Wait()
	must(t, appendErr)
	must(t, snapErr)
	l := load(t, b)
	checkLoad(t, l, l.snap.Seq, last)
	if l.snap.Seq != last {
		t.Fatalf("the last snapshot is at %d, want %d", l.snap.Seq, last)
	}
	checkRows(t, b, 0, 1)
}

func testReopenPersists(t *testing.T, bc backendCase) {
	if !bc.durable {
		t.Skip("not durable")
	}
	ctx := ctxT(t)
	url := bc.newURL(t)
	b, err := Open(ctx, url, quiet)
	must(t, err)
	must(t, b.Append(ctx, records(1, 20)))
	must(t, b.SaveSnapshot(ctx, snapshotAt(15)))
	must(t, b.Append(ctx, records(21, 25)))
	must(t, b.Close())

	b = openURL(t, url)
	checkLoad(t, load(t, b), 15, 25)
	if err := b.Append(ctx, records(27, 27)); !errors.Is(err, ErrSequence) {
		t.Fatalf("after reopen, Append with a gap: %v, want ErrSequence", err)
	}
	if err := b.SaveSnapshot(ctx, snapshotAt(14)); !errors.Is(err, ErrSequence) {
		t.Fatalf("after reopen, a snapshot older than the newest: %v, want ErrSequence", err)
	}
	must(t, b.Append(ctx, records(26, 26)))
	checkLoad(t, load(t, b), 15, 26)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
