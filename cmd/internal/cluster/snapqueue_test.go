package cluster

import (
	"bytes"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/encoding/protowire"

	"governor.dev/governor/cmd/internal/engine"
)

// logged applies commands to replicas with consecutive log indices and
// times, and fails the test on an error.
type logged struct {
	t     testing.TB
	index uint64
	fs    []*FSM
}

func (l *logged) apply(c *Command) *Result {
	l.t.Helper()
	l.index++
	c.Now = int64(l.index) * int64(time.Millisecond)
	var first *Result
	for _, f := range l.fs {
		r := f.Apply(&raft.Log{Index: l.index, Type: raft.LogCommand, Data: c.Encode()}).(*Result)
		if r.Err != nil {
			l.t.Fatalf("%v at %d: %v", c.Op, l.index, r.Err)
		}
		if first == nil {
			first = r
		}
	}
	return first
}

// contendedQueue builds, on the replicas of l, two tenants of weights 2
// and 1 under a root that holds 2 slots, a child of the first whose own
// limit of 1 parks its waiters and its child's, and 14 acquires queued
// among them; then it
// frees a slot freed times, each granted to the next waiter. From 1 to 6,
// the queue is left with the first tenant half way through its turn, its
// child's group parked, or that group holding the promise of a slot, and
// the round's cursor on either tenant. It returns the leases held, oldest
// first.
func contendedQueue(l *logged, freed int) []engine.LeaseInfo {
	var ss []engine.ID
	for i := range 4 {
		ss = append(ss, l.apply(&Command{Op: OpOpenSession, Target: engine.RootID, Token: [32]byte{byte(i + 1)}}).Session.ID)
	}
	l.apply(&Command{Op: OpSetLimit, Target: engine.RootID, Name: "gpu", Value: ptr(int64(2))})
	t1 := l.apply(&Command{Op: OpCreate, Target: engine.RootID, Spec: &engine.Spec{Name: "t1", Weight: 2}}).Node.ID
	t2 := l.apply(&Command{Op: OpCreate, Target: engine.RootID, Spec: &engine.Spec{Name: "t2"}}).Node.ID
	sub := l.apply(&Command{Op: OpCreate, Target: t1, Spec: &engine.Spec{Name: "sub", Priority: 1, Limits: map[string]int64{"gpu": 1}}}).Node.ID
	low := l.apply(&Command{Op: OpCreate, Target: t1, Spec: &engine.Spec{Name: "low"}}).Node.ID
	subx := l.apply(&Command{Op: OpCreate, Target: sub, Spec: &engine.Spec{Name: "x"}}).Node.ID
	held := []engine.LeaseInfo{
		l.apply(&Command{Op: OpAcquire, Session: ss[0], Target: sub, Name: "gpu"}).Lease,
		l.apply(&Command{Op: OpAcquire, Session: ss[1], Target: t2, Name: "gpu"}).Lease,
	}
	for i, nd := range []engine.ID{sub, low, t2, t1, subx, t2, low, t1, t2, sub, low, t2, subx, t1} {
		if l.apply(&Command{Op: OpAcquire, Session: ss[i%4], Target: nd, Name: "gpu", Span: time.Hour}).Waiter == nil {
			l.t.Fatalf("acquire %d did not queue", i)
		}
	}
	for range freed {
		held = releaseOldest(l, held)
	}
	return held
}

// releaseOldest releases the oldest lease held and returns the leases
// held then, with the one granted in its place, if any, at the end.
func releaseOldest(l *logged, held []engine.LeaseInfo) []engine.LeaseInfo {
	l.t.Helper()
	before := l.fs[0].Engine().Stats().Leases
	l.apply(&Command{Op: OpRelease, Session: held[0].Session, Target: held[0].ID})
	held = held[1:]
	if l.fs[0].Engine().Stats().Leases == before {
		held = append(held, newestLease(l.t, l.fs[0]))
	}
	return held
}

// newestLease is the lease with the highest id that the replica holds.
func newestLease(t testing.TB, f *FSM) engine.LeaseInfo {
	t.Helper()
	leases := f.Engine().Dump().Leases
	if len(leases) == 0 {
		t.Fatal("no lease held")
	}
	l := slices.MaxFunc(leases, func(a, b engine.LeaseRec) int { return int(a.ID - b.ID) })
	return engine.LeaseInfo{ID: l.ID, Session: l.Session, Node: l.Node}
}

// grantOrder frees slots one at a time on the replicas until no lease is
// held, and returns, per replica, the log index of the acquire each grant
// went to, in order, read from the replica's own waiters; with no lease
// held, the grants made so far.
func grantOrder(l *logged, held []engine.LeaseInfo) [][]uint64 {
	l.t.Helper()
	order := make([][]uint64, len(l.fs))
	for first := true; first || len(held) > 0; first = false {
		if len(held) > 0 {
			held = releaseOldest(l, held)
		}
		for i, f := range l.fs {
			f.mu.Lock()
			for index, w := range f.waiters.byIndex {
				select {
				case g := <-w.C():
					if g.Err != nil {
						l.t.Fatalf("waiter %d failed: %v", index, g.Err)
					}
					order[i] = append(order[i], index)
				default:
				}
			}
			f.mu.Unlock()
		}
	}
	return order
}

// TestSnapshotKeepsTheFairQueue takes a snapshot while acquires wait (some
// parked behind a full child, a tenant of weight 2 half way through its
// turn: contendedQueue), restores it on a new replica, and then frees the
// slots one at a time on both: the same waiters are granted in the same
// order, and the replicas stay identical.
func TestSnapshotKeepsTheFairQueue(t *testing.T) {
	for freed := 1; freed <= 6; freed++ {
		a, b := NewFSM(), NewFSM()
		l := &logged{t: t, fs: []*FSM{a}}
		held := contendedQueue(l, freed)
		if before := grantOrder(l, nil); len(before[0]) != freed {
			t.Fatalf("grants before the snapshot: %v, want %d", before[0], freed)
		}
		if err := b.Restore(io.NopCloser(bytes.NewReader(persist(t, a)))); err != nil {
			t.Fatal(err)
		}
		l.fs = append(l.fs, b)
		if a.Checksum() != b.Checksum() {
			t.Fatalf("%d freed: the restored replica differs at once", freed)
		}
		order := grantOrder(l, held)
		if len(order[0]) != 14-freed || !slices.Equal(order[0], order[1]) {
			t.Fatalf("%d freed: grants by the log index of their acquire: %v on the replica that took the snapshot, %v on the restored one", freed, order[0], order[1])
		}
		if a.Checksum() != b.Checksum() {
			t.Fatalf("%d freed: the replicas differ once the queue is empty", freed)
		}
	}
}

// TestRestoredWaitersAreAbandonedByTheirIndex: an Abandon after a restore
// names waiters by the log index of their Acquire, queued or granted: the
// queued one leaves the queue, and the lease of the granted one is
// released, on the restored replica as on the one that took the snapshot.
func TestRestoredWaitersAreAbandonedByTheirIndex(t *testing.T) {
	a, b := NewFSM(), NewFSM()
	l := &logged{t: t, fs: []*FSM{a}}
	held := contendedQueue(l, 3)
	queuedIndex, grantedIndex := uint64(0), uint64(0)
	a.mu.Lock()
	for index, w := range a.waiters.byIndex {
		switch lease := a.Engine().WaiterLease(w); {
		case lease == held[len(held)-1].ID:
			grantedIndex = index
		case lease == 0 && queuedIndex == 0:
			queuedIndex = index
		}
	}
	a.mu.Unlock()
	if queuedIndex == 0 || grantedIndex == 0 {
		t.Fatalf("no queued waiter (%d) or no waiter whose lease is held (%d)", queuedIndex, grantedIndex)
	}
	if err := b.Restore(io.NopCloser(bytes.NewReader(persist(t, a)))); err != nil {
		t.Fatal(err)
	}
	l.fs = append(l.fs, b)
	leases := a.Engine().Stats().Leases
	l.apply(&Command{Op: OpAbandon, Waiter: queuedIndex})
	l.apply(&Command{Op: OpAbandon, Waiter: grantedIndex})
	for _, f := range l.fs {
		if n := queuedNow(f.Engine()); n != 9 {
			t.Fatalf("%d acquires wait after one was abandoned and a slot was freed, want 9", n)
		}
	}
	if got := b.Engine().Stats().Leases; got != leases {
		t.Fatalf("the restored replica holds %d leases after abandoning a granted waiter, want %d (its slot went to the next)", got, leases)
	}
	if a.Checksum() != b.Checksum() {
		t.Fatal("the replicas differ after the abandons")
	}
}

// TestSnapshotWithoutQueueStillLoads restores a snapshot in the format
// written before snapshots held the queue and the member table: the
// header's length first, then the header and the image.
func TestSnapshotWithoutQueueStillLoads(t *testing.T) {
	a, b := NewFSM(), NewFSM()
	l := &logged{t: t, fs: []*FSM{a}}
	s := l.apply(&Command{Op: OpOpenSession, Target: engine.RootID, Span: time.Minute, Token: [32]byte{9}}).Session.ID
	nd := l.apply(&Command{Op: OpCreate, Target: engine.RootID, Spec: &engine.Spec{Name: "n", Quotas: map[string]int64{"tokens": 9}}}).Node.ID
	l.apply(&Command{Op: OpConsume, Session: s, Target: nd, Name: "tokens", Amount: 4})
	l.apply(&Command{Op: OpAcquire, Session: s, Target: nd, Name: "gpu"})
	raw := persist(t, a)
	if raw[0] != withQueue {
		t.Fatalf("a snapshot starts with %d, want %d", raw[0], withQueue)
	}
	head, n := protowire.ConsumeBytes(raw[1:])
	_, m := protowire.ConsumeBytes(raw[1+n:])
	_, k := protowire.ConsumeBytes(raw[1+n+m:])
	old := append(protowire.AppendBytes(nil, head), raw[1+n+m+k:]...)
	if err := b.Restore(io.NopCloser(bytes.NewReader(old))); err != nil {
		t.Fatal(err)
	}
	if a.Checksum() != b.Checksum() {
		t.Fatal("a snapshot in the old format restores to another state")
	}
}

// TestReattachedWaiterKeepsItsFirstIndex: an acquire retried with its
// request id re-attaches to its waiter, which stays known by the log index
// of the first Acquire, on the replica that saw both and on one restored
// from a snapshot taken after: an Abandon by that index withdraws it on
// both.
func TestReattachedWaiterKeepsItsFirstIndex(t *testing.T) {
	a, b := NewFSM(), NewFSM()
	l := &logged{t: t, fs: []*FSM{a}}
	s := l.apply(&Command{Op: OpOpenSession, Target: engine.RootID, Token: [32]byte{1}}).Session.ID
	nd := l.apply(&Command{Op: OpCreate, Target: engine.RootID, Spec: &engine.Spec{Name: "p", Limits: map[string]int64{"gpu": 1}}}).Node.ID
	l.apply(&Command{Op: OpAcquire, Session: s, Target: nd, Name: "gpu"})
	w := l.apply(&Command{Op: OpAcquire, Session: s, Target: nd, Name: "gpu", Request: "q1"}).Waiter
	first := l.index
	if again := l.apply(&Command{Op: OpAcquire, Session: s, Target: nd, Name: "gpu", Request: "q1"}).Waiter; w == nil || again != w {
		t.Fatalf("the retry got waiter %p, want the first, %p", again, w)
	}
	if err := b.Restore(io.NopCloser(bytes.NewReader(persist(t, a)))); err != nil {
		t.Fatal(err)
	}
	l.fs = append(l.fs, b)
	l.apply(&Command{Op: OpAbandon, Waiter: first})
	for i, f := range l.fs {
		if n := queuedNow(f.Engine()); n != 0 {
			t.Fatalf("replica %d: %d acquires wait after the first one's index was abandoned, want 0", i, n)
		}
	}
}

// FuzzRestoreSnapshot: no snapshot, however spoilt, makes Restore panic,
// and one it refuses leaves the replica as it was.
func FuzzRestoreSnapshot(f *testing.F) {
	src := NewFSM()
	contendedQueue(&logged{t: f, fs: []*FSM{src}}, 3)
	var sink sinkBuffer
	snap, err := src.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	if err := snap.Persist(&sink); err != nil {
		f.Fatal(err)
	}
	f.Add(sink.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewFSM()
		before := r.Checksum()
		if err := r.Restore(io.NopCloser(bytes.NewReader(data))); err != nil && r.Checksum() != before {
			t.Fatalf("a refused snapshot changed the replica: %v", err)
		}
	})
}
