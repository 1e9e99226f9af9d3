package cluster

import (
	"encoding/binary"
	"hash/fnv"
	"maps"
	"slices"

	"governor.dev/governor/cmd/internal/engine"
)

// maxSums bounds how many checksums a replica keeps waiting for their
// compare, so a leader that never sends one leaves no growing map.
const maxSums = 64

// applyCheck takes a checksum (OpChecksum) or compares one (OpCompare).
func (f *FSM) applyCheck(e *engine.Engine, cmd *Command, r *Result) {
	switch cmd.Op {
	case OpChecksum:
		if len(f.sums) >= maxSums {
			delete(f.sums, slices.Min(slices.Collect(maps.Keys(f.sums))))
		}
		r.Sum = f.Checksum()
		f.sums[f.applying] = r.Sum
	case OpCompare:
		mine, ok := f.sums[cmd.Waiter]
		delete(f.sums, cmd.Waiter)
		if ok && mine != cmd.Sum {
			f.mu.Lock()
			f.mismatch = append(f.mismatch, Mismatch{Index: cmd.Waiter, Mine: mine, Leader: cmd.Sum, AppliedAtIndex: f.applying})
			f.mu.Unlock()
		}
	}
}

// Checksum is a hash of the replica's whole state: its engine's snapshot,
// the times its sessions lapse, its waiters (queueImage) and its member
// table (by id), as of the last command's time. Two
// replicas that applied the same commands have the same checksum. A
// tombstone whose time is up answers nothing, and any call may forget it
// (a read on the leader too), so those are left out. So is the count of
// the engine's events: a replica restored from a snapshot may take the
// removal of an ended subtree in more steps, each an event, than the one
// that took the snapshot, and reach the same tree (a replica keeps no
// record of events, and no answer depends on their count). It is O(size of
// the tree).
func (f *FSM) Checksum() uint64 {
	e := f.Engine()
	now := f.clock.now.Load()
	st := e.Dump()
	st.Seq = 0
	st.Tombs = slices.DeleteFunc(st.Tombs, func(t engine.TombRec) bool { return t.Until <= now })
	h := fnv.New64a()
	raw, err := st.Encode()
	if err != nil {
		panic("cluster: encode a dump of the engine: " + err.Error())
	}
	h.Write(raw)
	exp := e.Expiries()
	var b [16]byte
	for _, id := range slices.Sorted(maps.Keys(exp)) {
		binary.LittleEndian.PutUint64(b[:8], uint64(id))
		binary.LittleEndian.PutUint64(b[8:], uint64(exp[id]))
		h.Write(b[:])
	}
	q, err := f.queueImage(e)
	if err != nil {
		panic("cluster: copy the replica's waiters: " + err.Error())
	}
	h.Write(q.encode())
	h.Write(appendMembers(nil, f.copyMembers()))
	return h.Sum64()
}
