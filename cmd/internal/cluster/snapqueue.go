package cluster

import (
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"governor.dev/governor/cmd/internal/engine"
)

// queueImage is what a snapshot holds of a replica's waiters: the engine's
// fair queue, the log index of each queued acquire (its id in Abandon), and
// the waiters granted a lease that is still held, which an Abandon would
// release.
type queueImage struct {
	engine.QueueImage
	indices []uint64             // log index of each of QueueImage.Waiters
	granted map[uint64]engine.ID // log index → lease, of granted waiters not settled
}

// queueImage copies the replica's waiters. It runs on the FSM goroutine,
// which alone changes them. O(waiters).
func (f *FSM) queueImage(e *engine.Engine) (queueImage, error) {
	qi, ws := e.Queue()
	q := queueImage{QueueImage: qi, indices: make([]uint64, len(ws)), granted: make(map[uint64]engine.ID)}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, w := range ws {
		index, ok := f.waiters.index[w]
		if !ok {
			return queueImage{}, fmt.Errorf("%w: queued acquire %d has no log index", ErrMismatch, qi.Waiters[i].Arrival)
		}
		q.indices[i] = index
	}
	for index, w := range f.waiters.byIndex {
		if lease := e.WaiterLease(w); lease != 0 && !e.Settled(w) {
			q.granted[index] = lease
		}
	}
	return q, nil
}

// restoreQueue queues the image's waiters in e and keeps them by their log
// indices, in place of the replica's.
func (f *FSM) restoreQueue(e *engine.Engine, q queueImage) error {
	ws, err := e.RestoreQueue(q.QueueImage)
	if err != nil {
		return fmt.Errorf("restore replica snapshot's queue: %w", err)
	}
	kept := newWaiters()
	for i, w := range ws {
		kept.byIndex[q.indices[i]], kept.index[w] = w, q.indices[i]
	}
	for index, lease := range q.granted {
		if kept.byIndex[index] != nil {
			return fmt.Errorf("%w: replica snapshot keeps log index %d twice", ErrCorruptCommand, index)
		}
		w := engine.GrantedWaiter(lease)
		kept.byIndex[index], kept.index[w] = w, index
	}
	f.mu.Lock()
	f.waiters = kept
	f.mu.Unlock()
	return nil
}

// encode writes the image as varints and length-prefixed strings, in a
// fixed order.
func (q *queueImage) encode() []byte {
	b := protowire.AppendVarint(nil, q.Arrivals)
	b = protowire.AppendVarint(b, uint64(len(q.Waiters)))
	for i, w := range q.Waiters {
		b = appendUints(b, q.indices[i], w.Arrival, uint64(w.Session), uint64(w.Node))
		b = protowire.AppendString(b, w.Class)
		b = appendUints(b, uint64(w.MaxHold))
		b = protowire.AppendString(b, w.Request)
		b = appendUints(b, w.Hash, uint64(w.At))
	}
	b = protowire.AppendVarint(b, uint64(len(q.Groups)))
	for _, g := range q.Groups {
		b = protowire.AppendVarint(b, uint64(g.Node))
		b = protowire.AppendString(b, g.Class)
		b = appendUints(b, uint64(g.Parked), uint64(g.Promised))
	}
	b = protowire.AppendVarint(b, uint64(len(q.Tenants)))
	for _, t := range q.Tenants {
		b = protowire.AppendString(b, t.Class)
		b = appendUints(b, uint64(t.Tenant), uint64(t.Deficit), boolBit(t.Blocked), uint64(t.Ring+1))
	}
	b = protowire.AppendVarint(b, uint64(len(q.granted)))
	for _, index := range slices.Sorted(maps.Keys(q.granted)) {
		b = appendUints(b, index, uint64(q.granted[index]))
	}
	return b
}

func appendUints(b []byte, vs ...uint64) []byte {
	for _, v := range vs {
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// decodeQueue reads what encode wrote. Counts are checked against the bytes
// left, so a corrupt count allocates nothing large.
func decodeQueue(b []byte) (queueImage, error) {
	t := &tape{b: b}
	q := queueImage{granted: make(map[uint64]engine.ID)}
	q.Arrivals = t.uint()
	for n := t.count(); n > 0; n-- {
		q.indices = append(q.indices, t.uint())
		w := engine.QueuedAcquire{Arrival: t.uint(), Session: engine.ID(t.uint()), Node: engine.ID(t.uint()), Class: t.str()}
		w.MaxHold, w.Request = int64(t.uint()), t.str()
		w.Hash, w.At = t.uint(), int(t.uint())
		q.Waiters = append(q.Waiters, w)
	}
	for n := t.count(); n > 0; n-- {
		g := engine.QueuedGroup{Node: engine.ID(t.uint()), Class: t.str()}
		g.Parked, g.Promised = engine.ID(t.uint()), engine.ID(t.uint())
		q.Groups = append(q.Groups, g)
	}
	for n := t.count(); n > 0; n-- {
		tq := engine.QueuedTenant{Class: t.str(), Tenant: engine.ID(t.uint()), Deficit: int(t.uint()), Blocked: t.uint() != 0}
		tq.Ring = int(t.uint()) - 1
		q.Tenants = append(q.Tenants, tq)
	}
	for n := t.count(); n > 0; n-- {
		q.granted[t.uint()] = engine.ID(t.uint())
	}
	if t.err == nil && len(t.b) > 0 {
		t.err = fmt.Errorf("%d bytes after its end", len(t.b))
	}
	if t.err != nil {
		return queueImage{}, fmt.Errorf("%w: replica snapshot's queue: %v", ErrCorruptCommand, t.err)
	}
	return q, nil
}

// tape reads varints and strings in order; its first error sticks, and
// after it every read returns zero.
type tape struct {
	b   []byte
	err error
}

func (t *tape) uint() uint64 {
	if t.err != nil {
		return 0
	}
	v, n := protowire.ConsumeVarint(t.b)
	if n < 0 {
		t.err = protowire.ParseError(n)
		return 0
	}
	t.b = t.b[n:]
	return v
}

func (t *tape) str() string {
	if t.err != nil {
		return ""
	}
	v, n := protowire.ConsumeBytes(t.b)
	if n < 0 {
		t.err = protowire.ParseError(n)
		return ""
	}
	t.b = t.b[n:]
	return string(v)
}

// count reads a count of entries, each at least one byte long.
func (t *tape) count() int {
	n := t.uint()
	if n > uint64(len(t.b)) {
		t.err = fmt.Errorf("a count of %d with %d bytes left", n, len(t.b))
		return 0
	}
	return int(n)
}
