package faultnet

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// patience bounds every wait of these tests: long enough for elections on a
// loaded two-core machine, short enough that a stuck cluster fails the test.
const patience = 30 * time.Second

// listFSM is the tiny state machine of these tests: the values applied, in
// log order.
type listFSM struct {
	mu   sync.Mutex // guards vals
	vals []uint64
}

func (f *listFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vals = append(f.vals, binary.BigEndian.Uint64(l.Data))
	return len(f.vals)
}

func (f *listFSM) Snapshot() (raft.FSMSnapshot, error) {
	return snapshotJSON(&f.mu, &f.vals)
}

func (f *listFSM) Restore(r io.ReadCloser) error {
	return restoreJSON(r, &f.mu, &f.vals)
}

func (f *listFSM) values() []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.vals)
}

// listOf returns the values a member of a cluster of listFSM applied.
func listOf(n *node) []uint64 { return n.fsm.(*listFSM).values() }

// node is one raft member of a test cluster.
type node struct {
	addr  raft.ServerAddress
	raft  *raft.Raft
	fsm   raft.FSM
	trans *Transport
}

// cluster is a raft cluster whose members talk through one Net.
type cluster struct {
	t     *testing.T
	net   *Net
	nodes []*node
	obs   chan raft.Observation // every member's observations
}

// newCluster starts a cluster of n members whose state machine is listFSM.
func newCluster(t *testing.T, seed uint64, n int) *cluster {
	t.Helper()
	return newClusterOf(t, seed, n, func() raft.FSM { return &listFSM{} })
}

// newClusterOf starts n members with state machines made by fsm, bootstraps
// them as one cluster, and waits for a leader. Members keep few logs after a
// snapshot, so that a member left behind catches up by InstallSnapshot.
func newClusterOf(t *testing.T, seed uint64, n int, fsm func() raft.FSM) *cluster {
	t.Helper()
	c := &cluster{t: t, net: New(seed, 2*time.Second), obs: make(chan raft.Observation, 1024)}
	var servers []raft.Server
	for i := range n {
		addr := raft.ServerAddress(fmt.Sprintf("n%d", i+1))
		servers = append(servers, raft.Server{ID: raft.ServerID(addr), Address: addr})
	}
	for _, s := range servers {
		c.nodes = append(c.nodes, c.start(s.Address, fsm()))
	}
	if err := c.nodes[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	c.leader(c.nodes...)
	return c
}

func (c *cluster) start(addr raft.ServerAddress, fsm raft.FSM) *node {
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(addr)
	conf.HeartbeatTimeout = 300 * time.Millisecond
	conf.ElectionTimeout = 300 * time.Millisecond
	conf.LeaderLeaseTimeout = 150 * time.Millisecond
	conf.CommitTimeout = 10 * time.Millisecond
	conf.TrailingLogs = 4
	conf.SnapshotThreshold = 1 << 20
	conf.Logger = hclog.New(&hclog.LoggerOptions{Name: string(addr), Output: io.Discard, Level: hclog.Off})
	trans, err := c.net.Transport(addr)
	if err != nil {
		c.t.Fatal(err)
	}
	store := raft.NewInmemStore()
	r, err := raft.NewRaft(conf, fsm, store, store, raft.NewInmemSnapshotStore(), trans)
	if err != nil {
		c.t.Fatal(err)
	}
	r.RegisterObserver(raft.NewObserver(c.obs, false, nil))
	return &node{addr: addr, raft: r, fsm: fsm, trans: trans}
}

func (c *cluster) stop() {
	for _, n := range c.nodes {
		if err := n.raft.Shutdown().Error(); err != nil {
			c.t.Error(err)
		}
		_ = n.trans.Close()
	}
}

// await returns once cond holds, checking again at every observation a
// member makes (leader changes, votes, peer failures) and every few
// milliseconds for changes raft does not observe (applied entries).
func (c *cluster) await(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.NewTimer(patience)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-c.obs:
		case <-tick.C:
		case <-deadline.C:
			c.t.Fatalf("%s did not happen within %v", what, patience)
		}
	}
}

// leader waits until exactly one of among is leader, and returns it.
func (c *cluster) leader(among ...*node) *node {
	c.t.Helper()
	var found *node
	c.await("a leader among the members", func() bool {
		found = nil
		for _, n := range among {
			if n.raft.State() == raft.Leader {
				if found != nil {
					return false
				}
				found = n
			}
		}
		return found != nil
	})
	return found
}

// others returns the members other than the ones given.
func (c *cluster) others(not ...*node) []*node {
	var rest []*node
	for _, n := range c.nodes {
		if !slices.Contains(not, n) {
			rest = append(rest, n)
		}
	}
	return rest
}

// addrs returns the addresses of the members given.
func addrs(nodes ...*node) []raft.ServerAddress {
	var out []raft.ServerAddress
	for _, n := range nodes {
		out = append(out, n.addr)
	}
	return out
}

// apply applies v on n and waits until it is committed or refused.
func apply(n *node, v uint64) error {
	return n.raft.Apply(binary.BigEndian.AppendUint64(nil, v), patience).Error()
}

// applyAnywhere applies v on whichever member leads, trying again on
// failure, and returns once one attempt committed.
func (c *cluster) applyAnywhere(v uint64) {
	c.t.Helper()
	var err error
	c.await(fmt.Sprintf("committing %d", v), func() bool {
		for _, n := range c.nodes {
			if n.raft.State() == raft.Leader {
				if err = apply(n, v); err == nil {
					return true
				}
			}
		}
		return false
	})
}

// converged waits until every member applied the same values, and returns
// them.
func (c *cluster) converged() []uint64 {
	c.t.Helper()
	var vals []uint64
	c.await("members agreeing", func() bool {
		vals = listOf(c.nodes[0])
		for _, n := range c.nodes[1:] {
			if !slices.Equal(listOf(n), vals) {
				return false
			}
		}
		return true
	})
	return vals
}
