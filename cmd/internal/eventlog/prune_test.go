package eventlog

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// countingStager is a SQLite stager that counts the events each of its
// transactions deletes, and fails its drops from failAt on (0: never).
type countingStager struct {
	sqliteStager
	t         *testing.T
	published int64   // events the publish transaction deleted
	drops     []int64 // events each drop deleted
	failAt    int
}

func (c *countingStager) events() int64 {
	var n int64
	must(c.t, c.s.db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM events").Scan(&n))
	return n
}

func (c *countingStager) publish(ctx context.Context, seq uint64, time int64, id int64, chunks int) error {
	before := c.events()
	err := c.sqliteStager.publish(ctx, seq, time, id, chunks)
	c.published += before - c.events()
	return err
}

func (c *countingStager) drop(ctx context.Context, seq uint64) (int64, error) {
	if c.failAt > 0 && len(c.drops)+1 >= c.failAt {
		return 0, errors.New("the process stopped between two steps of the prune")
	}
	n, err := c.sqliteStager.drop(ctx, seq)
	c.drops = append(c.drops, n)
	return n, err
}

// openSQLiteFile opens the SQLite record at path and closes it when t ends.
func openSQLiteFile(t *testing.T, path string) *SQLite {
	t.Helper()
	b := openURL(t, "sqlite:"+path)
	return b.(*SQLite)
}

// TestPruneDeletesCoveredEventsInBoundedSteps streams a snapshot that
// covers more than two steps' worth of events: the transaction that
// publishes it deletes none of them, and each transaction after it at most
// pruneStep, so that appends run between them; all are gone at the end.
func TestPruneDeletesCoveredEventsInBoundedSteps(t *testing.T) {
	ctx := ctxT(t)
	s := openSQLiteFile(t, filepath.Join(t.TempDir(), "events.db"))
	last := uint64(2*pruneStep + 100)
	must(t, s.Append(ctx, records(1, last)))
	seq := last - 50
	st := &countingStager{sqliteStager: sqliteStager{s}, t: t}
	must(t, streamSnapshot(ctx, &s.ledger, st, seq, eventTime(seq), writeIn(streamData(ChunkSize+9), nil)))
	if st.published != 0 {
		t.Errorf("the transaction that published the snapshot deleted %d events, want 0", st.published)
	}
	var sum int64
	for i, n := range st.drops {
		if n > pruneStep {
			t.Errorf("prune step %d deleted %d events in one transaction, want at most %d", i, n, pruneStep)
		}
		sum += n
	}
	if sum != int64(seq) || st.events() != int64(last-seq) {
		t.Errorf("the prune deleted %d events in %d steps and left %d, want %d deleted and %d left", sum, len(st.drops), st.events(), seq, last-seq)
	}
	checkStreamed(t, load(t, s), seq, last)
}

// TestPruneStoppedMidwayLoadsAndFinishesLater stops a prune after its first
// step, as a process killed there would, and reopens the file: the record
// loads the snapshot and only the events after it, and the next snapshot
// deletes what the first left.
func TestPruneStoppedMidwayLoadsAndFinishesLater(t *testing.T) {
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "events.db")
	s := openSQLiteFile(t, path)
	last := uint64(2*pruneStep + 100)
	must(t, s.Append(ctx, records(1, last)))
	seq := last - 50
	st := &countingStager{sqliteStager: sqliteStager{s}, t: t, failAt: 2}
	if err := streamSnapshot(ctx, &s.ledger, st, seq, eventTime(seq), writeIn(streamData(99), nil)); err == nil {
		t.Fatal("a prune stopped midway reported success")
	}
	if left := st.events(); left != int64(last-seq)+int64(seq)-pruneStep {
		t.Fatalf("after one step of the prune %d events are left, want %d", left, int64(last)-pruneStep)
	}
	must(t, s.Close())
	s = openSQLiteFile(t, path)
	checkStreamed(t, load(t, s), seq, last)
	must(t, s.Append(ctx, records(last+1, last+10)))
	must(t, s.SaveSnapshot(ctx, snapshotAt(last+5)))
	checkLoad(t, load(t, s), last+5, last+10)
	if left := (&countingStager{sqliteStager: sqliteStager{s}, t: t}).events(); left != 5 {
		t.Errorf("the next snapshot left %d events on record, want the 5 after it", left)
	}
}

// checkStreamed checks that l is a streamed snapshot at snap and the events
// after it up to last.
func checkStreamed(t *testing.T, l loaded, snap, last uint64) {
	t.Helper()
	if l.snap == nil || l.snap.Seq != snap {
		t.Fatalf("loaded snapshot %+v, want one at %d", l.snap, snap)
	}
	if uint64(len(l.recs)) != last-snap || l.recs[0].Seq != snap+1 {
		t.Fatalf("loaded %d events from %d, want %d..%d", len(l.recs), l.recs[0].Seq, snap+1, last)
	}
}
