package cluster

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/cluster/faultnet"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/linz"
)

// The replicated quota and lease pool of the linearizability tests: the
// cap of each key, low enough that a run of the positive test reaches it,
// and the size of the pool. The negative controls use a cap no run reaches:
// once a key is full its usage stops changing and a stale read is no longer
// wrong.
const (
	linzCap   = 20000
	linzNoCap = 1 << 40
	linzPool  = 3
	linzKeys  = 2
	linzClass = "slot"
)

// linzCheckTime bounds each linearizability check.
const linzCheckTime = 2 * time.Minute

// linzLongEnv names the environment variable that, set to 1, makes each
// positive test check linzLongHistories histories of at least linzLongRun
// instead of one short one.
const linzLongEnv = "GOVERNOR_LINZ_LONG"

const (
	linzLongHistories = 50
	linzLongRun       = 8 * time.Second
)

// faultCluster is three Nodes, the engine as their FSM, whose raft
// transports are one faultnet.Net. Each member's API address is its raft
// address, so an ErrNotLeader names the member to follow.
type faultCluster struct {
	t       *testing.T
	net     *faultnet.Net
	nodes   []*Node
	addrs   []raft.ServerAddress
	trans   []*faultnet.Transport
	session engine.ID // holds every lease and names every request
	quota   engine.ID // the node whose quotas are the keys and whose limit is the pool
}

// newFaultCluster starts the members, waits for a leader, and creates the
// session and the node the clients use, with cap on every key.
func newFaultCluster(t *testing.T, seed uint64, cap int64) *faultCluster {
	t.Helper()
	rc := testRaftConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = 300*time.Millisecond, 300*time.Millisecond
	rc.LeaderLeaseTimeout, rc.CommitTimeout = 150*time.Millisecond, 10*time.Millisecond
	c := openFaultCluster(t, seed, func(_ int, cfg *Config) { cfg.Raft = rc })
	c.setUp(cap)
	return c
}

// openFaultCluster starts three members that bootstrap together over one
// faultnet.Net; tune, if not nil, changes member i's config first.
func openFaultCluster(t *testing.T, seed uint64, tune func(i int, cfg *Config)) *faultCluster {
	t.Helper()
	c := &faultCluster{t: t, net: faultnet.New(seed, 2*time.Second)}
	api := make(map[raft.ServerID]string)
	var servers []raft.Server
	for i := range 3 {
		addr := raft.ServerAddress(serverID(i))
		c.addrs = append(c.addrs, addr)
		api[serverID(i)] = string(addr)
		servers = append(servers, raft.Server{ID: serverID(i), Address: addr})
	}
	t.Cleanup(c.stop)
	for i := range 3 {
		tr, err := c.net.Transport(c.addrs[i])
		if err != nil {
			t.Fatal(err)
		}
		c.trans = append(c.trans, tr)
		cfg := Config{ID: serverID(i), Transport: tr, API: api, Bootstrap: servers}
		if tune != nil {
			tune(i, &cfg)
		}
		n, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, n)
	}
	return c
}

// setUp opens the session and creates the node, on whichever member leads,
// and makes every acquire of the run answer at once (see noQueue).
func (c *faultCluster) setUp(cap int64) {
	c.t.Helper()
	quotas := make(map[string]int64)
	for k := range linzKeys {
		quotas[fmt.Sprintf("k%d", k)] = cap
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		l := c.leader()
		if l < 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		n := c.nodes[l]
		s, err := n.OpenSession(&engine.Call{}, engine.RootID, time.Hour, [32]byte{9})
		if err != nil {
			continue
		}
		nd, err := n.Create(&engine.Call{Session: s.ID}, engine.RootID, engine.Spec{Name: "linz",
			Quotas: quotas, Limits: map[string]int64{linzClass: linzPool}})
		if err != nil || noQueue(n, s.ID, nd.ID) != nil {
			continue
		}
		c.session, c.quota = s.ID, nd.ID
		return
	}
	c.t.Fatal("the cluster did not take the session and node of the run within 30 s")
}

// noQueue fills the one place in the queue that tenant may have, so that an
// acquire that does not fit is refused with a *BoundError at once: a pool
// whose acquires never wait. (A bound is at least 1, and a queued acquire
// abandoned at once can race a grant, which the engine then releases, a
// hold no client saw.) The place is taken by an acquire that waits behind
// a lease of another class on a child node, which nobody releases.
func noQueue(n *Node, session, tenant engine.ID) error {
	gate, err := n.Create(&engine.Call{Session: session}, tenant, engine.Spec{Name: "gate", Limits: map[string]int64{"gate": 1}})
	if err != nil {
		return err
	}
	for range 2 {
		if _, _, err := n.Acquire(&engine.Call{Session: session}, gate.ID, "gate", 0); err != nil {
			return err
		}
	}
	one := engine.DefaultBounds()
	one[engine.BoundQueued] = 1
	return n.SetBounds(engine.BoundsConfig{Default: engine.DefaultBounds(), PerTenant: map[engine.ID]engine.Bounds{tenant: one}})
}

// stop shuts the members down and lets go of them, so that the cleanups
// of a long run's clusters hold no member's log.
func (c *faultCluster) stop() {
	for i, n := range c.nodes {
		if err := n.Shutdown(); err != nil {
			c.t.Error(err)
		}
		_ = c.trans[i].Close()
	}
	c.nodes, c.trans = nil, nil
}

// leader returns the index of a member that leads now, or -1.
func (c *faultCluster) leader() int {
	for i, n := range c.nodes {
		if n.raft.State() == raft.Leader {
			return i
		}
	}
	return -1
}

// current returns the address of the member that leads now, or of the
// first member when none does.
func (c *faultCluster) current() raft.ServerAddress {
	return c.addrs[max(c.leader(), 0)]
}

// others returns the addresses of the members other than a.
func (c *faultCluster) others(a raft.ServerAddress) []raft.ServerAddress {
	var out []raft.ServerAddress
	for _, b := range c.addrs {
		if b != a {
			out = append(out, b)
		}
	}
	return out
}

func (c *faultCluster) fault(after time.Duration, name string, do func(lead raft.ServerAddress, rest []raft.ServerAddress) error) linz.Fault {
	return linz.Fault{After: after, Name: name, Do: func() error {
		lead := c.current()
		return do(lead, c.others(lead))
	}}
}

func (c *faultCluster) isolateLeader(after time.Duration) linz.Fault {
	return c.fault(after, "isolate the leader", func(lead raft.ServerAddress, _ []raft.ServerAddress) error {
		return c.net.Isolate(lead)
	})
}

func (c *faultCluster) isolateFollower(after time.Duration) linz.Fault {
	return c.fault(after, "isolate a follower", func(_ raft.ServerAddress, rest []raft.ServerAddress) error {
		return c.net.Isolate(rest[0])
	})
}

// partition puts the leader and `with` of the others on one side.
func (c *faultCluster) partition(after time.Duration, with int) linz.Fault {
	return c.fault(after, "partition", func(lead raft.ServerAddress, rest []raft.ServerAddress) error {
		return c.net.Partition(append([]raft.ServerAddress{lead}, rest[:with]...), rest[with:])
	})
}

func (c *faultCluster) cutFromLeader(after time.Duration) linz.Fault {
	return c.fault(after, "cut leader to follower", func(lead raft.ServerAddress, rest []raft.ServerAddress) error {
		return c.net.Cut(lead, rest[0])
	})
}

func (c *faultCluster) slowAndLossy(after time.Duration) linz.Fault {
	return c.fault(after, "slow and lossy links", func(raft.ServerAddress, []raft.ServerAddress) error {
		if err := c.net.DelayAll(2*time.Millisecond, 8*time.Millisecond); err != nil {
			return err
		}
		return c.net.LoseAll(0.05)
	})
}

// slowLeader delays the messages from the leader, so that writes reach the
// followers before they learn the writes are committed.
func (c *faultCluster) slowLeader(after time.Duration) linz.Fault {
	return c.fault(after, "slow the leader", func(lead raft.ServerAddress, rest []raft.ServerAddress) error {
		for _, f := range rest {
			if err := c.net.Delay(lead, f, 30*time.Millisecond, 0); err != nil {
				return err
			}
		}
		return nil
	})
}

// failOverSlowly slows the link between the followers, both ways, and
// isolates the leader: its last writes are committed by its successor, and
// their clients retry them by request id.
func (c *faultCluster) failOverSlowly(after time.Duration) linz.Fault {
	return c.fault(after, "fail over slowly", func(lead raft.ServerAddress, rest []raft.ServerAddress) error {
		for _, r := range [][2]raft.ServerAddress{{rest[0], rest[1]}, {rest[1], rest[0]}} {
			if err := c.net.Delay(r[0], r[1], 100*time.Millisecond, 0); err != nil {
				return err
			}
		}
		return c.net.Isolate(lead)
	})
}

func (c *faultCluster) heal(after time.Duration) linz.Fault {
	return linz.Fault{After: after, Name: "heal", Do: func() error { c.net.Heal(); return nil }}
}

// schedule is every kind of fault once, healed in between, over about 6.5 s.
func (c *faultCluster) schedule() []linz.Fault {
	return []linz.Fault{
		c.slowLeader(300 * time.Millisecond),
		c.failOverSlowly(200 * time.Millisecond),
		c.heal(1000 * time.Millisecond),
		c.isolateLeader(300 * time.Millisecond),
		c.heal(900 * time.Millisecond),
		c.partition(300*time.Millisecond, 1),
		c.partition(500*time.Millisecond, 0),
		c.heal(900 * time.Millisecond),
		c.cutFromLeader(300 * time.Millisecond),
		c.heal(500 * time.Millisecond),
		c.slowAndLossy(100 * time.Millisecond),
		c.heal(800 * time.Millisecond),
	}
}

// clients is how many clients a run has, how many of them only read.
type clients struct{ all, readers int }

// drive runs clients against the cluster through target for d while faults
// are made, heals the network, and returns the history.
func (c *faultCluster) drive(target linz.Target, cl clients, seed uint64, d time.Duration, faults []linz.Fault) linz.History {
	c.t.Helper()
	r := linz.Run{
		Target:   target,
		Clients:  cl.all,
		Readers:  cl.readers,
		Pause:    2 * time.Millisecond,
		Duration: d,
		Keys:     linzKeys,
		Seed:     seed,
		Retries:  5,
		Faults:   faults,
		Timeout:  5 * time.Second,
	}
	h, err := r.Go(c.t.Context())
	c.net.Heal()
	if err != nil {
		c.t.Fatal(err)
	}
	if len(h.Quota) == 0 || len(h.Leases) == 0 {
		c.t.Fatalf("run recorded %d quota and %d lease calls", len(h.Quota), len(h.Leases))
	}
	unknown := 0
	for _, op := range append(h.Quota, h.Leases...) {
		if op.Output == linz.Unknown {
			unknown++
		}
	}
	c.t.Logf("history: %d quota calls, %d lease calls, %d of them with unknown outcomes", len(h.Quota), len(h.Leases), unknown)
	return h
}

// TestLinearizableUnderFaults drives clients against three Nodes while the
// leader is isolated behind slow links (its last writes are committed by its
// successor and retried by request id), isolated again, the cluster is split
// 2/1 both ways, one direction is cut, and links are slow and lossy. Writes
// follow ErrNotLeader's hint; reads are Describe and Validate on the leader.
// The quota history is linearizable under Idempotent and the lease history
// under LeasePool.
func TestLinearizableUnderFaults(t *testing.T) {
	checkHistories(t, 21, clients{6, 1}, 6500*time.Millisecond, (*faultCluster).schedule)
}

// TestLinearizableThroughFailovers is TestCatchesReadsWithoutBarrier's
// schedule on the real read path: six slow failovers, clients that only
// read reading through them, and every history linearizable.
func TestLinearizableThroughFailovers(t *testing.T) {
	checkHistories(t, 31, clients{8, 2}, 9*time.Second, func(c *faultCluster) []linz.Fault { return c.failovers(6) })
}

// checkHistories checks one history of d, or with GOVERNOR_LINZ_LONG=1
// linzLongHistories of linzLongRun, the schedule repeated to fill it.
func checkHistories(t *testing.T, seed uint64, cl clients, d time.Duration, schedule func(*faultCluster) []linz.Fault) {
	histories := 1
	if os.Getenv(linzLongEnv) == "1" {
		histories, d = linzLongHistories, max(d, linzLongRun)
	}
	for i := range uint64(histories) {
		c := newFaultCluster(t, seed+i, linzCap)
		h := c.drive(&nodeTarget{c: c, read: leaderRead}, cl, i+1, d, append(schedule(c), schedule(c)...))
		c.stop()
		if !linz.Check(t, linz.Idempotent(linzCap), h.Quota, linzCheckTime) ||
			!linz.Check(t, linz.LeasePool(linzPool), h.Leases, linzCheckTime) {
			t.Fatalf("history %d of %d is not linearizable", i+1, histories)
		}
	}
}

// TestCatchesFollowerReads is a negative control: reads served by any
// member's engine as it stands, one member isolated, are not linearizable.
func TestCatchesFollowerReads(t *testing.T) {
	mustFail(t, "reads from any member", func(attempt uint64) (*faultCluster, linz.History) {
		c := newFaultCluster(t, 40+attempt, linzNoCap)
		return c, c.drive(&nodeTarget{c: c, read: anyRead}, clients{6, 1}, attempt, 1500*time.Millisecond,
			[]linz.Fault{c.isolateFollower(300 * time.Millisecond)})
	})
}

// TestCatchesReadsWithoutBarrier is a negative control: a new leader that
// reads its engine before the barrier of its term misses writes the old
// leader acknowledged and the followers stored without learning they were
// committed. Slow links from the leader make such writes, cut when the
// leader is isolated; a slow link between the followers keeps the new
// leader from committing its first entry for a while, which widens the
// window. Clients that only read keep reading through the failover.
func TestCatchesReadsWithoutBarrier(t *testing.T) {
	mustFail(t, "reads without the barrier", func(attempt uint64) (*faultCluster, linz.History) {
		c := newFaultCluster(t, 50+attempt, linzNoCap)
		return c, c.drive(&nodeTarget{c: c, read: leaderAsIs}, clients{8, 2}, attempt, 9*time.Second, c.failovers(6))
	})
}

// failovers is n rounds of: slow the leader, fail over slowly, heal.
func (c *faultCluster) failovers(n int) []linz.Fault {
	var faults []linz.Fault
	for range n {
		faults = append(faults, c.slowLeader(300*time.Millisecond), c.failOverSlowly(200*time.Millisecond), c.heal(1000*time.Millisecond))
	}
	return faults
}

// mustFail runs histories of a broken read path until one is not
// linearizable, and fails the test when linzAttempts were all linearizable:
// a stale read is a race a history may miss by chance.
func mustFail(t *testing.T, what string, history func(attempt uint64) (*faultCluster, linz.History)) {
	t.Helper()
	for attempt := uint64(1); ; attempt++ {
		c, h := history(attempt)
		c.stop()
		quota := porcupine.CheckOperationsTimeout(linz.Idempotent(linzNoCap), h.Quota, linzCheckTime)
		leases := porcupine.CheckOperationsTimeout(linz.LeasePool(linzPool), h.Leases, linzCheckTime)
		switch {
		case quota == porcupine.Illegal || leases == porcupine.Illegal:
			return
		case attempt == linzAttempts:
			t.Fatalf("%d histories of %s were all linearizable (the last: quota %s, leases %s); want one illegal", attempt, what, quota, leases)
		}
		t.Logf("history %d of %s was linearizable; another", attempt, what)
	}
}

// linzAttempts is how many histories a negative control checks before it
// says the check misses the broken read path. The faultnet harness saw one
// history in two or three without a stale read on a loaded machine under
// the race detector; five in a row would mean the check no longer finds it.
const linzAttempts = 5

// readVia says from which member's engine a nodeTarget reads, and how.
type readVia int

const (
	// leaderRead reads through Node: barrier, read, leadership check.
	leaderRead readVia = iota
	// anyRead reads any member's engine as it stands: broken on purpose.
	anyRead
	// leaderAsIs reads the leader's engine as it stands, without the
	// barrier of its term: broken on purpose.
	leaderAsIs
)

// nodeTarget is linz.Target over a faultCluster: calls go to the member
// last named the leader, and move to the one an ErrNotLeader names.
type nodeTarget struct {
	c    *faultCluster
	read readVia

	at   atomic.Uint64 // the member calls go to
	turn atomic.Uint64 // picks the member of an anyRead
}

var _ linz.Target = (*nodeTarget)(nil)
