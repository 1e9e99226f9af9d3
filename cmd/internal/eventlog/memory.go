package eventlog

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
)

// Memory is a Backend that keeps the record in memory: nothing survives the
// process. It is for tests and for a governord run without a database. Its
// zero value is not usable; call NewMemory. Safe for concurrent use.
type Memory struct {
	ledger ledger

	mu     sync.Mutex // guards the fields below
	snap   *Snapshot  // the newest snapshot, nil if none
	events []Record   // the events after snap, in order
	closed bool
}

var _ immediate = (*Memory)(nil)

// NewMemory returns an empty in-memory record.
func NewMemory() *Memory { return &Memory{} }

// appendsAtOnce marks Memory as immediate: Append never waits.
func (*Memory) appendsAtOnce() {}

// Append implements Backend. It keeps copies of the records' data.
func (m *Memory) Append(_ context.Context, recs []Record) error {
	return m.ledger.append(recs, func() error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.closed {
			return ErrClosed
		}
		for _, r := range recs {
			r.Data = slices.Clone(nonNil(r.Data))
			m.events = append(m.events, r)
		}
		return nil
	})
}

// SaveSnapshot implements Backend.
func (m *Memory) SaveSnapshot(_ context.Context, snap Snapshot) error {
	return m.ledger.snapshot(snap.Seq, func() error { return m.put(snap) })
}

// put stores snap and deletes the events it covers.
func (m *Memory) put(snap Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	snap.Data = slices.Clone(nonNil(snap.Data))
	m.snap = &snap
	keep := 0
	for keep < len(m.events) && m.events[keep].Seq <= snap.Seq {
		keep++
	}
	m.events = slices.Clone(m.events[keep:])
	return nil
}

// StreamSnapshot implements Backend. The memory record holds everything in
// memory anyway: it gathers what write writes and saves it.
func (m *Memory) StreamSnapshot(_ context.Context, seq uint64, time int64, write func(io.Writer) error) error {
	return m.ledger.snapshot(seq, func() error {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return err
		}
		return m.put(Snapshot{Seq: seq, Time: time, Data: buf.Bytes()})
	})
}

// Load implements Backend. restore and replay run without any lock held:
// the view is the record as it was when Load began.
func (m *Memory) Load(_ context.Context, restore func(*Snapshot) error, replay func(Record) error) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	snap, events := m.snap, m.events[:len(m.events):len(m.events)]
	m.mu.Unlock()
	var out *Snapshot
	if snap != nil {
		out = &Snapshot{Seq: snap.Seq, Time: snap.Time, Data: slices.Clone(snap.Data)}
	}
	if err := restore(out); err != nil {
		return err
	}
	for _, r := range events {
		r.Data = slices.Clone(r.Data)
		if err := replay(r); err != nil {
			return err
		}
	}
	return nil
}

// Close implements Backend.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
