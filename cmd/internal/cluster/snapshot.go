package cluster

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/encoding/protowire"

	"governor.dev/governor/cmd/internal/engine"
)

// snapshot is what FSM.Snapshot copied on the FSM goroutine: the image,
// brought up to date with the engine's changes since the previous snapshot,
// and what the engine's record leaves out (the last command's time, when
// sessions lapse, the members' API addresses). Persist encodes and writes
// it on raft's snapshot goroutine, outside the engine lock. raft takes one
// snapshot at a time, so the image is not folded again before Persist is
// done with it.
type snapshot struct {
	image    *engine.Image
	last     int64
	expiries map[engine.ID]int64
	queue    queueImage
	members  members
}

// withQueue starts a snapshot in the format that holds the queue: the
// byte 0, where a snapshot without it starts with its header's length,
// never 0.
const withQueue = 0

// Snapshot copies what changed since the previous snapshot: its cost
// follows the rate of change, not the size of the tree (but for the
// sessions' expiry times, one number per session, and the queued acquires,
// which a tenant's bounds limit). The queue is copied whole, so a replica
// restored from the snapshot grants the same waiters in the same order as
// the others, and Abandon names them by the same log indices.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	e := f.Engine()
	q, err := f.queueImage(e)
	if err != nil {
		return nil, err
	}
	f.image.Apply(e.Capture())
	return &snapshot{image: f.image, last: f.last, expiries: e.Expiries(), queue: q, members: f.copyMembers()}, nil
}

// Persist writes the byte withQueue, the header (its length, then the last
// time and each session's id and expiry as varints), the queue (its length,
// then queueImage.encode), the member table (its length, then the table:
// members.go) and then the image's snapshot.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	var head []byte
	head = protowire.AppendVarint(head, uint64(s.last))
	for _, id := range slices.Sorted(maps.Keys(s.expiries)) {
		head = protowire.AppendVarint(head, uint64(id))
		head = protowire.AppendVarint(head, uint64(s.expiries[id]))
	}
	w := bufio.NewWriter(sink)
	pre := protowire.AppendBytes([]byte{withQueue}, head)
	_, err := w.Write(protowire.AppendBytes(pre, s.queue.encode()))
	if err == nil {
		_, err = w.Write(memberSection(s.members))
	}
	if err == nil {
		_, err = s.image.WriteTo(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist replica snapshot: %w", err)
	}
	return sink.Close()
}

// Release does nothing: the image belongs to the FSM.
func (s *snapshot) Release() {}

// Restore replaces the engine with the one the snapshot describes, and
// gives it to the Fed, if any. A snapshot taken before snapshots held the
// queue (taken while no acquire waited) restores with an empty queue.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("read replica snapshot: %w", err)
	}
	queued := len(raw) > 0 && raw[0] == withQueue
	if queued {
		raw = raw[1:]
	}
	head, rest, err := consumePart(raw, "header")
	if err != nil {
		return err
	}
	last, expiries, err := decodeHead(head)
	if err != nil {
		return err
	}
	q := queueImage{granted: map[uint64]engine.ID{}}
	mem := members{}
	if queued {
		var qraw, table []byte
		if qraw, rest, err = consumePart(rest, "queue"); err != nil {
			return err
		}
		if q, err = decodeQueue(qraw); err != nil {
			return err
		}
		if table, rest, err = consumePart(rest, "member table"); err != nil {
			return err
		}
		if mem, err = decodeMembers(table); err != nil {
			return err
		}
	}
	st, err := engine.DecodeSnapshot(rest)
	if err != nil {
		return fmt.Errorf("decode replica snapshot: %w", err)
	}
	f.clock.now.Store(last)
	e, err := engine.Restore(engine.Options{Clock: f.clock, Sink: &f.feed}, st)
	if err != nil {
		return fmt.Errorf("restore replica snapshot: %w", err)
	}
	e.SetExpiries(expiries)
	if err := f.restoreQueue(e, q); err != nil {
		return err
	}
	f.last = last
	f.image = engine.NewImage(st)
	f.restoreMembers(mem)
	clear(f.sums)
	f.eng.Store(e)
	f.feed.load(e)
	return nil
}

// consumePart reads one length-prefixed part of a snapshot.
func consumePart(raw []byte, name string) (part, rest []byte, err error) {
	part, n := protowire.ConsumeBytes(raw)
	if n < 0 {
		return nil, nil, fmt.Errorf("%w: replica snapshot %s: %v", ErrCorruptCommand, name, protowire.ParseError(n))
	}
	return part, raw[n:], nil
}

func decodeHead(head []byte) (int64, map[engine.ID]int64, error) {
	var vs []uint64
	for len(head) > 0 {
		v, n := protowire.ConsumeVarint(head)
		if n < 0 {
			return 0, nil, fmt.Errorf("%w: replica snapshot header: %v", ErrCorruptCommand, protowire.ParseError(n))
		}
		vs = append(vs, v)
		head = head[n:]
	}
	if len(vs)%2 != 1 {
		return 0, nil, fmt.Errorf("%w: replica snapshot header holds %d numbers, want an odd count", ErrCorruptCommand, len(vs))
	}
	exp := make(map[engine.ID]int64, len(vs)/2)
	for i := 1; i < len(vs); i += 2 {
		exp[engine.ID(vs[i])] = int64(vs[i+1])
	}
	return int64(vs[0]), exp, nil
}
