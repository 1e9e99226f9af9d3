package eventlog

import (
	"math"
	"sync"
)

// ledger keeps, for one backend, where the record ends, and serializes the
// writes that move that end, so that every write can be checked before it is
// made. Backends assume they are their store's only writer; this is where
// that assumption lives.
type ledger struct {
	appendMu sync.Mutex // held for a whole Append
	snapMu   sync.Mutex // held for a whole SaveSnapshot

	mu   sync.Mutex // guards the fields below
	last uint64     // sequence number of the last event or snapshot on record
	snap uint64     // sequence number of the newest snapshot on record
}

// append checks that recs continue the record, runs write (the transaction),
// and moves the end of the record once write succeeded.
func (l *ledger) append(recs []Record, write func() error) error {
	if len(recs) == 0 {
		return nil
	}
	l.appendMu.Lock()
	defer l.appendMu.Unlock()
	l.mu.Lock()
	last := l.last
	l.mu.Unlock()
	if err := checkContiguous(last, recs); err != nil {
		return err
	}
	if err := write(); err != nil {
		return err
	}
	l.mu.Lock()
	l.last = recs[len(recs)-1].Seq
	l.mu.Unlock()
	return nil
}

// snapshot checks that a snapshot at seq is neither ahead of the record nor
// older than the newest one, runs write, and records the new snapshot.
// Appends may run meanwhile: they only add events after l.last >= seq.
func (l *ledger) snapshot(seq uint64, write func() error) error {
	l.snapMu.Lock()
	defer l.snapMu.Unlock()
	l.mu.Lock()
	last, snap := l.last, l.snap
	l.mu.Unlock()
	switch {
	case seq > last:
		return sequenceError("snapshot at %d is ahead of the record, which ends at %d", seq, last)
	case seq < snap:
		return sequenceError("snapshot at %d is older than the snapshot at %d", seq, snap)
	}
	if err := write(); err != nil {
		return err
	}
	l.mu.Lock()
	l.snap = seq
	l.mu.Unlock()
	return nil
}

// checkContiguous says whether recs may follow the event or snapshot at last.
func checkContiguous(last uint64, recs []Record) error {
	want := last + 1
	for _, r := range recs {
		if r.Seq != want {
			return sequenceError("event %d given where %d comes next", r.Seq, want)
		}
		if r.Seq > math.MaxInt64 {
			return sequenceError("event %d does not fit a signed 64-bit column", r.Seq)
		}
		want++
	}
	return nil
}

// endsQuery reads what a ledger starts from, in SQL both dialects speak.
const endsQuery = "SELECT COALESCE((SELECT MAX(seq) FROM events), 0), COALESCE((SELECT MAX(seq) FROM snapshots), 0)"

// start sets where the record ends from the largest event and snapshot
// sequence numbers stored (0 when there are none).
func (l *ledger) start(maxEvent, maxSnap int64) error {
	if maxEvent < 0 || maxSnap < 0 {
		return corruptError("negative sequence number on record (events up to %d, snapshots up to %d)", maxEvent, maxSnap)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last, l.snap = uint64(max(maxEvent, maxSnap)), uint64(maxSnap)
	return nil
}
