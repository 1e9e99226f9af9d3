package cluster

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// testCluster is a cluster of members in this process over raft's
// in-memory transport, with timeouts sized for a loaded 2-core machine.
type testCluster struct {
	t     testing.TB
	nodes []*Node
	trans []*raft.InmemTransport
	api   map[raft.ServerID]string
	tune  func(*Config)
}

// testRaftConfig is raft's config for the test clusters. The leader's
// lease is as long as the followers' heartbeat timeout: the members share
// one process, and when that process is not scheduled for a while (on
// this shared 2-core machine, wake-ups 250 to 400 ms late were measured
// every few minutes) a shorter lease deposed a leader no follower had
// given up on, and the test that was using it failed.
func testRaftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout = 500 * time.Millisecond
	rc.ElectionTimeout = 500 * time.Millisecond
	rc.LeaderLeaseTimeout = 500 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	return rc
}

// soloOnDisk is the config of a one-member cluster that keeps its log,
// stable store and snapshots in dir.
func soloOnDisk(dir string) Config {
	addr, tr := raft.NewInmemTransport("")
	return Config{ID: "solo", Transport: tr, Dir: dir, Raft: testRaftConfig(), ReapEvery: time.Hour,
		Bootstrap: []raft.Server{{ID: "solo", Address: addr}}}
}

// openSolo opens the member cfg describes and fails the test if it cannot.
func openSolo(t *testing.T, cfg Config) *Node {
	t.Helper()
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func serverID(i int) raft.ServerID { return raft.ServerID(fmt.Sprintf("n%d", i)) }

// newCluster starts n members that bootstrap together; tune, if not nil,
// changes each member's config first.
func newCluster(t testing.TB, n int, tune func(*Config)) *testCluster {
	t.Helper()
	tc := &testCluster{t: t, api: make(map[raft.ServerID]string), tune: tune}
	var servers []raft.Server
	for i := range n {
		_, tr := raft.NewInmemTransport("")
		tc.trans = append(tc.trans, tr)
		servers = append(servers, raft.Server{ID: serverID(i), Address: tr.LocalAddr()})
		tc.api[serverID(i)] = fmt.Sprintf("127.0.0.1:%d", 7000+i)
	}
	tc.connect()
	for i := range n {
		tc.start(i, servers)
	}
	t.Cleanup(tc.shutdown)
	return tc
}

// connect links every transport with every other.
func (tc *testCluster) connect() {
	for _, a := range tc.trans {
		for _, b := range tc.trans {
			if a != b {
				a.Connect(b.LocalAddr(), b)
			}
		}
	}
}

func (tc *testCluster) start(i int, bootstrap []raft.Server) *Node {
	tc.t.Helper()
	// No background command unless a test asks: checksums are compared
	// once the log stops growing.
	cfg := Config{ID: serverID(i), Transport: tc.trans[i], API: tc.api, Raft: testRaftConfig(), Bootstrap: bootstrap, ReapEvery: time.Hour}
	if tc.tune != nil {
		tc.tune(&cfg)
	}
	n, err := Open(cfg)
	if err != nil {
		tc.t.Fatal(err)
	}
	if i < len(tc.nodes) {
		tc.nodes[i] = n
	} else {
		tc.nodes = append(tc.nodes, n)
	}
	return n
}

// add starts one more member, empty, and has the leader add it as a voter.
func (tc *testCluster) add() *Node {
	tc.t.Helper()
	i := len(tc.nodes)
	_, tr := raft.NewInmemTransport("")
	tc.trans = append(tc.trans, tr)
	tc.api[serverID(i)] = fmt.Sprintf("127.0.0.1:%d", 7000+i)
	tc.connect()
	n := tc.start(i, nil)
	if err := tc.leader().raft.AddVoter(serverID(i), tr.LocalAddr(), 0, 10*time.Second).Error(); err != nil {
		tc.t.Fatal(err)
	}
	return n
}

func (tc *testCluster) shutdown() {
	for _, n := range tc.nodes {
		if n != nil {
			_ = n.Shutdown()
		}
	}
}

// kill stops member i as a crash would: it is cut off from the others
// first, so nothing it had not sent reaches them, then shut down.
func (tc *testCluster) kill(i int) {
	tc.isolate(i)
	_ = tc.nodes[i].Shutdown()
	tc.nodes[i] = nil
}

// isolate cuts member i off from the others, both ways, until connect.
func (tc *testCluster) isolate(i int) {
	tc.trans[i].DisconnectAll()
	for j, tr := range tc.trans {
		if j != i {
			tr.Disconnect(tc.trans[i].LocalAddr())
		}
	}
}

// leader waits for a live member to lead and returns it.
func (tc *testCluster) leader() *Node {
	tc.t.Helper()
	n, _ := tc.leaderIndex()
	return n
}

func (tc *testCluster) leaderIndex() (*Node, int) {
	tc.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for i, n := range tc.nodes {
			if n != nil && n.raft.State() == raft.Leader {
				return n, i
			}
		}
		tc.waitChange()
	}
	tc.t.Fatal("no leader within 30 s")
	return nil, 0
}

// waitChange waits for a member's leader to change, or a moment.
func (tc *testCluster) waitChange() {
	ch := make(chan raft.Observation, 8)
	var obs []*raft.Observer
	for _, n := range tc.nodes {
		if n != nil {
			o := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
				_, ok := o.Data.(raft.LeaderObservation)
				return ok
			})
			n.raft.RegisterObserver(o)
			obs = append(obs, o)
		}
	}
	defer func() {
		for i, n := range tc.liveNodes() {
			n.raft.DeregisterObserver(obs[i])
		}
	}()
	select {
	case <-ch:
	case <-time.After(100 * time.Millisecond): // an election may have ended before the observers were registered
	}
}

func (tc *testCluster) liveNodes() []*Node {
	var out []*Node
	for _, n := range tc.nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

// follower returns a live member that does not lead.
func (tc *testCluster) follower() *Node {
	tc.t.Helper()
	l := tc.leader()
	for _, n := range tc.liveNodes() {
		if n != l {
			return n
		}
	}
	tc.t.Fatal("no follower")
	return nil
}

// converged waits until every live member applied what the leader applied
// now, and reports whether their checksums then agree. raft counts an entry
// applied once it hands it to the FSM goroutine, so a member's checksum is
// read again for a while before it counts as different.
func (tc *testCluster) converged() bool {
	tc.t.Helper()
	l := tc.leader()
	b := l.raft.Barrier(10 * time.Second)
	if err := b.Error(); err != nil {
		tc.t.Fatal(err)
	}
	// The barrier's own index, not the leader's AppliedIndex: raft answers
	// the barrier from its FSM goroutine, which may come before the
	// leader's main goroutine counts the barrier applied.
	target := b.(raft.IndexFuture).Index()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range tc.liveNodes() {
		for n.raft.AppliedIndex() < target {
			if time.Now().After(deadline) {
				tc.t.Fatalf("member %s applied %d, not %d, within 30 s", n.cfg.ID, n.raft.AppliedIndex(), target)
			}
			time.Sleep(2 * time.Millisecond) // waiting for replication to reach a member, not for a result
		}
	}
	want := l.fsm.Checksum()
	for _, n := range tc.liveNodes() {
		for n.fsm.Checksum() != want {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(2 * time.Millisecond) // waiting for the FSM goroutine to apply what raft counted
		}
	}
	return true
}

// onlyMismatch waits until the checksum pair the leader logged last has
// been compared, and fails unless bad, and no other member, reported a
// mismatch: bad within 30 s, the others once their state equals the
// leader's.
func (tc *testCluster) onlyMismatch(bad *Node) {
	tc.t.Helper()
	l := tc.leader()
	if err := l.raft.Barrier(10 * time.Second).Error(); err != nil {
		tc.t.Fatal(err)
	}
	want := l.fsm.Checksum()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range tc.liveNodes() {
		done := func() bool { return n.fsm.Checksum() == want }
		if n == bad {
			done = func() bool { return len(n.fsm.Mismatches()) > 0 }
		}
		for !done() {
			if time.Now().After(deadline) {
				tc.t.Fatalf("member %s (the one made to differ: %v) neither matched the leader nor reported a mismatch within 30 s", n.cfg.ID, n == bad)
			}
			time.Sleep(2 * time.Millisecond) // waiting for the member to apply the compare, not for a result
		}
		if got := len(n.fsm.Mismatches()); n != bad && got != 0 {
			tc.t.Fatalf("member %s reported %d mismatches; it applied the log faithfully", n.cfg.ID, got)
		}
	}
}

// firstError keeps the first error set in it, of whatever type; safe for
// concurrent use. (An atomic.Value panics when a second error of another
// type is stored in it, which hid the first failure behind a panic.)
type firstError struct{ p atomic.Pointer[error] }

func (f *firstError) set(err error) { f.p.CompareAndSwap(nil, &err) }

// get returns the first error set, nil if none was.
func (f *firstError) get() error {
	if p := f.p.Load(); p != nil {
		return *p
	}
	return nil
}
