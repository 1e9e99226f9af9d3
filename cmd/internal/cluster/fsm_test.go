package cluster

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

func TestReplicasFedTheSameLogEndIdentical(t *testing.T) {
	for seed := range uint64(10) {
		a, b := NewFSM(), NewFSM()
		log := drive(t, a, newWorkload(seed), 1, 3000)
		feed(b, 1, log)
		if sa, sb := a.Checksum(), b.Checksum(); sa != sb {
			t.Fatalf("seed %d: checksums differ: %x and %x", seed, sa, sb)
		}
		if !reflect.DeepEqual(a.Engine().Dump(), b.Engine().Dump()) {
			t.Fatalf("seed %d: dumps differ", seed)
		}
		if a.Engine().Seq() < 1000 {
			t.Fatalf("seed %d: the workload made only %d events; it should exercise the engine", seed, a.Engine().Seq())
		}
	}
}

func TestApplyUsesTheCommandsTimeNotTheClock(t *testing.T) {
	f := NewFSM()
	at := time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	c := &Command{Op: OpOpenSession, Target: 1, Span: time.Minute, Token: [32]byte{1}, Now: at.UnixNano()}
	r := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: c.Encode()}).(*Result)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if want := at.Add(time.Minute).UnixNano(); r.Session.Expires != want {
		t.Fatalf("session expires at %d, want %d (the command's time plus its ttl)", r.Session.Expires, want)
	}
	back := &Command{Op: OpOpenSession, Target: 1, Span: time.Minute, Token: [32]byte{2}, Now: at.Add(-time.Hour).UnixNano()}
	r = f.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: back.Encode()}).(*Result)
	if want := at.Add(time.Minute).UnixNano(); r.Session.Expires != want {
		t.Fatalf("a stamp earlier than the last command's applied at %d, want the last time %d", r.Session.Expires-int64(time.Minute), at.UnixNano())
	}
}

func TestCorruptCommandAppliesNothing(t *testing.T) {
	f := NewFSM()
	before := f.Checksum()
	r := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: []byte{0xff}}).(*Result)
	if r.Err == nil {
		t.Fatal("a corrupt command applied without an error")
	}
	if f.Checksum() != before {
		t.Fatal("a corrupt command changed the state")
	}
}

// sinkBuffer is a raft.SnapshotSink over a buffer.
type sinkBuffer struct{ bytes.Buffer }

func (*sinkBuffer) ID() string    { return "test" }
func (*sinkBuffer) Cancel() error { return nil }
func (*sinkBuffer) Close() error  { return nil }

func persist(t *testing.T, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink sinkBuffer
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	return sink.Bytes()
}

// TestSnapshotRestoreMatchesTheReplicaThatTookIt takes snapshots more than
// once (the later ones only fold changes into the image), restores a fresh
// replica from the last, and feeds both the rest of the log: they must stay
// identical, sessions' lapse times and queued acquires included
// (heartbeats are in no event). The acquires queued at the snapshot are
// granted, abandoned or failed on the rest of the log alike.
func TestSnapshotRestoreMatchesTheReplicaThatTookIt(t *testing.T) {
	queued := 0
	for seed := range uint64(10) {
		queued += snapshotRestore(t, seed)
	}
	if queued == 0 {
		t.Fatal("no acquire was queued at any snapshot: the test proves nothing of the queue")
	}
}

// snapshotRestore runs one seed and returns how many acquires the snapshot
// held queued.
func snapshotRestore(t *testing.T, seed uint64) int {
	a, b := NewFSM(), NewFSM()
	w := newWorkload(seed + 200)
	drive(t, a, w, 1, 800)
	persist(t, a)
	drive(t, a, w, 801, 800)
	next := uint64(1601)
	raw := persist(t, a)
	if err := b.Restore(io.NopCloser(bytes.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	if sa, sb := a.Checksum(), b.Checksum(); sa != sb {
		t.Fatalf("seed %d: restored replica differs at once: %x and %x", seed, sa, sb)
	}
	queued := queuedNow(b.Engine())
	for range 15 {
		rest := drive(t, a, w, next, 100)
		feed(b, next, rest)
		next += 100
		if sa, sb := a.Checksum(), b.Checksum(); sa != sb {
			t.Fatalf("seed %d: restored replica diverged on the rest of the log by index %d: %x and %x", seed, next-1, sa, sb)
		}
	}
	return queued
}

func queuedNow(e *engine.Engine) int {
	n := 0
	for _, w := range e.Stats().Waiting {
		n += w
	}
	return n
}

func TestRestoreRefusesACorruptSnapshot(t *testing.T) {
	f := NewFSM()
	drive(t, f, newWorkload(3), 1, 100)
	before := f.Checksum()
	raw := persist(t, f)
	for name, data := range map[string][]byte{"empty": nil, "truncated": raw[:len(raw)/2], "bad header": {3, 1, 2, 3}} {
		if err := f.Restore(io.NopCloser(bytes.NewReader(data))); err == nil {
			t.Errorf("%s: restore took a corrupt snapshot", name)
		}
	}
	if f.Checksum() != before {
		t.Fatal("a refused restore changed the state")
	}
}

// TestReapRechecksWhatIsDue puts a Reap in the log after a renewal that the
// leader's timer did not know of: the replica decides at the Reap's time
// with what it holds, so the renewed session lives, and lapses only at a
// Reap after its new expiry.
func TestReapRechecksWhatIsDue(t *testing.T) {
	f := NewFSM()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	open := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: (&Command{Op: OpOpenSession, Target: 1, Span: time.Second, Token: [32]byte{1}, Now: at(0)}).Encode()}).(*Result)
	if open.Err != nil {
		t.Fatal(open.Err)
	}
	steps := []struct {
		cmd   *Command
		alive bool
	}{
		{&Command{Op: OpHeartbeat, Renew: []engine.ID{open.Session.ID}, Now: at(900 * time.Millisecond)}, true},
		{&Command{Op: OpReap, Now: at(1500 * time.Millisecond)}, true}, // due by the first expiry, not by the renewed one
		{&Command{Op: OpReap, Now: at(1900 * time.Millisecond)}, false},
	}
	for i, st := range steps {
		f.Apply(&raft.Log{Index: uint64(i + 2), Type: raft.LogCommand, Data: st.cmd.Encode()})
		if _, alive := f.Engine().SessionByToken([32]byte{1}); alive != st.alive {
			t.Fatalf("after %v at +%v: session alive %v, want %v", st.cmd.Op, time.Duration(st.cmd.Now-at(0)), alive, st.alive)
		}
	}
}

// TestSettledWaitersAreForgotten queues 500 acquires one after another, each
// granted and then released: the replica must not keep them all.
func TestSettledWaitersAreForgotten(t *testing.T) {
	f := NewFSM()
	index := uint64(0)
	apply := func(c *Command) *Result {
		t.Helper()
		index++
		c.Now = int64(index) * int64(time.Millisecond)
		r := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: c.Encode()}).(*Result)
		if r.Err != nil {
			t.Fatalf("%v: %v", c.Op, r.Err)
		}
		return r
	}
	session := func(i int) engine.ID {
		return apply(&Command{Op: OpOpenSession, Target: 1, Token: [32]byte{byte(i), byte(i >> 8), 1}}).Session.ID
	}
	nd := apply(&Command{Op: OpCreate, Target: 1, Spec: &engine.Spec{Name: "pool", Limits: map[string]int64{"gpu": 1}}}).Node.ID
	holder := session(0)
	held := apply(&Command{Op: OpAcquire, Session: holder, Target: nd, Name: "gpu"}).Lease
	for i := 1; i <= 500; i++ {
		s := session(i)
		w := apply(&Command{Op: OpAcquire, Session: s, Target: nd, Name: "gpu"}).Waiter
		if w == nil {
			t.Fatal("the acquire did not queue")
		}
		if f.Engine().Settled(w) {
			t.Fatal("a queued waiter counts as settled")
		}
		apply(&Command{Op: OpRelease, Session: holder, Target: held.ID})
		g := <-w.C()
		if f.Engine().Settled(w) {
			t.Fatal("a waiter whose lease is held counts as settled: abandoning it must still release the lease")
		}
		holder, held = s, g.Lease
	}
	apply(&Command{Op: OpRelease, Session: holder, Target: held.ID})
	if kept := f.keptWaiters(); kept >= 2*minSweep {
		t.Fatalf("the replica keeps %d settled waiters", kept)
	}
}

// TestReadsBetweenCommandsChangeNothing reads every node, lease and session
// the workload knows between the commands of one replica (as a leader
// serves reads) and not on the other: the replicas must stay identical, or
// a leader's reads would make it differ from its followers.
func TestReadsBetweenCommandsChangeNothing(t *testing.T) {
	for seed := range uint64(10) {
		a, b := NewFSM(), NewFSM()
		w := newWorkload(seed + 100)
		var log [][]byte
		for i := range 1500 {
			c := w.next(i)
			data := c.Encode()
			r := a.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: data}).(*Result)
			w.learn(c, uint64(i+1), r)
			log = append(log, data)
			readAll(a.Engine(), w)
		}
		feed(b, 1, log)
		if sa, sb := a.Checksum(), b.Checksum(); sa != sb {
			t.Fatalf("seed %d: the replica that served reads differs: %x and %x", seed, sa, sb)
		}
	}
}

func readAll(e *engine.Engine, w *workload) {
	for _, id := range w.nodes {
		_, _, _, _ = e.Describe(&engine.Call{}, id, nil)
		_, _ = e.Explain(&engine.Call{}, id, "calls", 1)
		_, _ = e.Explain(&engine.Call{}, id, "tokens", 1)
	}
	for _, l := range w.leases {
		_, _ = e.Validate(&engine.Call{Session: l.Session}, l.ID)
	}
}
