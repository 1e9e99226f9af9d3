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
// sessions lapse, the members' API addresses). Persist encodes and writes it on raft's snapshot
// goroutine, outside the engine lock. raft takes one snapshot at a time, so
// the image is not folded again before Persist is done with it.
type snapshot struct {
	image    *engine.Image
	last     int64
	expiries map[engine.ID]int64
	members  members
}

// Snapshot copies what changed since the previous snapshot: its cost
// follows the rate of change, not the size of the tree (but for the
// sessions' expiry times, one number per session). Queued acquires are in
// no snapshot yet, and a replica restored without them would grant
// differently from the others, so while any acquire waits it refuses with
// ErrAcquiresQueued and raft tries again at its next snapshot interval; the
// log stays whole meanwhile.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	e := f.Engine()
	if n := queuedAcquires(e); n > 0 {
		return nil, fmt.Errorf("%w: %d wait now", ErrAcquiresQueued, n)
	}
	f.image.Apply(e.Capture())
	return &snapshot{image: f.image, last: f.last, expiries: e.Expiries(), members: f.copyMembers()}, nil
}

// Persist writes the header (its length, then the last time and each
// session's id and expiry as varints), the member table (its length, then
// the table: members.go) and then the image's snapshot.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	var head []byte
	head = protowire.AppendVarint(head, uint64(s.last))
	for _, id := range slices.Sorted(maps.Keys(s.expiries)) {
		head = protowire.AppendVarint(head, uint64(id))
		head = protowire.AppendVarint(head, uint64(s.expiries[id]))
	}
	w := bufio.NewWriter(sink)
	_, err := w.Write(protowire.AppendBytes(nil, head))
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
// gives it to the Fed, if any.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("read replica snapshot: %w", err)
	}
	head, n := protowire.ConsumeBytes(raw)
	if n < 0 {
		return fmt.Errorf("%w: replica snapshot header: %v", ErrCorruptCommand, protowire.ParseError(n))
	}
	last, expiries, err := decodeHead(head)
	if err != nil {
		return err
	}
	raw = raw[n:]
	table, n := protowire.ConsumeBytes(raw)
	if n < 0 {
		return fmt.Errorf("%w: replica snapshot member table: %v", ErrCorruptCommand, protowire.ParseError(n))
	}
	mem, err := decodeMembers(table)
	if err != nil {
		return err
	}
	st, err := engine.DecodeSnapshot(raw[n:])
	if err != nil {
		return fmt.Errorf("decode replica snapshot: %w", err)
	}
	f.clock.now.Store(last)
	e, err := engine.Restore(engine.Options{Clock: f.clock, Sink: &f.feed}, st)
	if err != nil {
		return fmt.Errorf("restore replica snapshot: %w", err)
	}
	e.SetExpiries(expiries)
	f.last = last
	f.image = engine.NewImage(st)
	f.mu.Lock()
	f.waiters = newWaiters()
	f.mu.Unlock()
	f.restoreMembers(mem)
	clear(f.sums)
	f.eng.Store(e)
	f.feed.load(e)
	return nil
}

func queuedAcquires(e *engine.Engine) int {
	n := 0
	for _, w := range e.Stats().Waiting {
		n += w
	}
	return n
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
