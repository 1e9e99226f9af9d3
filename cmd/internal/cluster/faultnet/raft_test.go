package faultnet

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestIsolatedLeaderIsReplacedAndCannotCommit isolates the leader with a
// write in flight: the majority elects a new leader and commits, the old
// leader's write fails and, after healing, is on no member. (Writes that
// need not fail go through applyAnywhere, which retries them if leadership
// moves on a loaded machine; a retry may commit a value twice.)
func TestIsolatedLeaderIsReplacedAndCannotCommit(t *testing.T) {
	c := newCluster(t, 1, 3)
	c.applyAnywhere(1)
	old := c.leader(c.nodes...)
	if err := c.net.Isolate(old.addr); err != nil {
		t.Fatal(err)
	}
	stale := make(chan error, 1)
	go func() { stale <- apply(old, 99) }()
	c.leader(c.others(old)...)
	c.applyAnywhere(2)
	err := <-stale
	if !errors.Is(err, raft.ErrLeadershipLost) && !errors.Is(err, raft.ErrNotLeader) {
		t.Fatalf("write on the isolated leader: %v, want leadership lost or not leader", err)
	}
	c.net.Heal()
	checkValues(t, c.converged(), []uint64{1, 2}, []uint64{99})
}

// checkValues fails the test unless every value of want, and none of
// unwanted, is in got.
func checkValues(t *testing.T, got, want, unwanted []uint64) {
	t.Helper()
	for _, v := range want {
		if !slices.Contains(got, v) {
			t.Fatalf("acknowledged value %d is missing from %v", v, got)
		}
	}
	for _, v := range unwanted {
		if slices.Contains(got, v) {
			t.Fatalf("value %d, never committed, is in %v", v, got)
		}
	}
}

// TestIsolatedFollowerCatchesUpBySnapshot leaves a follower behind the
// snapshots of the other two: it applies nothing while isolated, and after
// healing catches up through InstallSnapshot.
func TestIsolatedFollowerCatchesUpBySnapshot(t *testing.T) {
	c := newCluster(t, 2, 3)
	lead := c.leader(c.nodes...)
	behind := c.others(lead)[0]
	if err := c.net.Isolate(behind.addr); err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for v := range uint64(20) {
		c.applyAnywhere(v)
		want = append(want, v)
	}
	for _, n := range c.others(behind) {
		if err := n.raft.Snapshot().Error(); err != nil {
			t.Fatal(err)
		}
	}
	if got := listOf(behind); len(got) != 0 {
		t.Fatalf("isolated follower applied %v", got)
	}
	c.net.Heal()
	checkValues(t, c.converged(), want, nil)
	if behind.raft.Stats()["last_snapshot_index"] == "0" {
		t.Fatal("the follower caught up without installing the leader's snapshot")
	}
}

// TestOneWayCutStillCommits cuts one direction between the leader and a
// follower, each way in turn: the leader and the other follower are a
// majority that still talks, so writes commit, and every member agrees on
// them once healed.
func TestOneWayCutStillCommits(t *testing.T) {
	for _, toLeader := range []bool{false, true} {
		name := map[bool]string{false: "leader to follower", true: "follower to leader"}[toLeader]
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, 3, 3)
			lead := c.leader(c.nodes...)
			f := c.others(lead)[0]
			from, to := lead.addr, f.addr
			if toLeader {
				from, to = to, from
			}
			if err := c.net.Cut(from, to); err != nil {
				t.Fatal(err)
			}
			checkProgress(t, c, 10)
		})
	}
}

// TestSlowLossyLinksStillCommit delays every message by a random few
// milliseconds and drops a twentieth of them: writes still commit, and
// nothing acknowledged is lost.
func TestSlowLossyLinksStillCommit(t *testing.T) {
	c := newCluster(t, 4, 3)
	if err := c.net.DelayAll(2*time.Millisecond, 8*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.net.LoseAll(0.05); err != nil {
		t.Fatal(err)
	}
	checkProgress(t, c, 20)
}

// checkProgress commits n values under the current faults, heals, and
// checks that every member holds every acknowledged value.
func checkProgress(t *testing.T, c *cluster, n uint64) {
	t.Helper()
	for v := range n {
		c.applyAnywhere(v)
	}
	c.net.Heal()
	var want []uint64
	for v := range n {
		want = append(want, v)
	}
	checkValues(t, c.converged(), want, nil)
}

// TestPartitionCommitsOnlyOnMajoritySide splits the cluster 2/1, first with
// the leader in the majority, then alone: only the side of two commits, and
// the lone member's writes are on no member after healing.
func TestPartitionCommitsOnlyOnMajoritySide(t *testing.T) {
	c := newCluster(t, 5, 3)
	lead := c.leader(c.nodes...)
	rest := c.others(lead)
	lone := rest[1]
	if err := c.net.Partition(addrs(lead, rest[0]), addrs(lone)); err != nil {
		t.Fatal(err)
	}
	c.applyAnywhere(1)
	if err := apply(lone, 98); !errors.Is(err, raft.ErrNotLeader) {
		t.Fatalf("write on the lone member: %v, want not leader", err)
	}
	c.await("the majority applying 1", func() bool {
		return slices.Contains(listOf(lead), 1) && slices.Contains(listOf(rest[0]), 1)
	})
	if got := listOf(lone); len(got) != 0 {
		t.Fatalf("the lone member applied %v", got)
	}

	lead = c.leader(lead, rest[0])
	rest = c.others(lead)
	if err := c.net.Partition(addrs(lead), addrs(rest...)); err != nil {
		t.Fatal(err)
	}
	stale := make(chan error, 1)
	go func() { stale <- apply(lead, 99) }()
	c.leader(rest...)
	c.applyAnywhere(2)
	if err := <-stale; err == nil {
		t.Fatal("the lone old leader committed a write")
	}
	c.net.Heal()
	checkValues(t, c.converged(), []uint64{1, 2}, []uint64{98, 99})
}
