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
// leader's write fails and, after healing, is on no member.
func TestIsolatedLeaderIsReplacedAndCannotCommit(t *testing.T) {
	c := newCluster(t, 1, 3)
	old := c.leader(c.nodes...)
	if err := apply(old, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.net.Isolate(old.addr); err != nil {
		t.Fatal(err)
	}
	stale := make(chan error, 1)
	go func() { stale <- apply(old, 99) }()
	neu := c.leader(c.others(old)...)
	if err := apply(neu, 2); err != nil {
		t.Fatal(err)
	}
	err := <-stale
	if !errors.Is(err, raft.ErrLeadershipLost) && !errors.Is(err, raft.ErrNotLeader) {
		t.Fatalf("write on the isolated leader: %v, want leadership lost or not leader", err)
	}
	c.net.Heal()
	if got := c.converged(); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("members agree on %v, want [1 2]", got)
	}
}

// TestIsolatedFollowerCatchesUpBySnapshot leaves a follower behind the
// leader's last snapshot: it applies nothing while isolated, and after
// healing catches up through InstallSnapshot.
func TestIsolatedFollowerCatchesUpBySnapshot(t *testing.T) {
	c := newCluster(t, 2, 3)
	lead := c.leader(c.nodes...)
	behind := c.others(lead)[0]
	if err := c.net.Isolate(behind.addr); err != nil {
		t.Fatal(err)
	}
	for v := range uint64(20) {
		if err := apply(lead, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := lead.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if got := listOf(behind); len(got) != 0 {
		t.Fatalf("isolated follower applied %v", got)
	}
	c.net.Heal()
	if got := c.converged(); len(got) != 20 {
		t.Fatalf("members agree on %d values, want 20", len(got))
	}
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
	got := c.converged()
	for v := range n {
		if !slices.Contains(got, v) {
			t.Fatalf("acknowledged value %d is missing from %v", v, got)
		}
	}
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
	if err := apply(lead, 1); err != nil {
		t.Fatal(err)
	}
	if err := apply(lone, 98); !errors.Is(err, raft.ErrNotLeader) {
		t.Fatalf("write on the lone member: %v, want not leader", err)
	}
	c.await("the majority applying 1", func() bool { return slices.Equal(listOf(rest[0]), []uint64{1}) })
	if got := listOf(lone); len(got) != 0 {
		t.Fatalf("the lone member applied %v", got)
	}

	if err := c.net.Partition(addrs(lead), addrs(rest...)); err != nil {
		t.Fatal(err)
	}
	stale := make(chan error, 1)
	go func() { stale <- apply(lead, 99) }()
	neu := c.leader(rest...)
	if err := apply(neu, 2); err != nil {
		t.Fatal(err)
	}
	if err := <-stale; err == nil {
		t.Fatal("the lone old leader committed a write")
	}
	c.net.Heal()
	if got := c.converged(); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("members agree on %v, want [1 2]", got)
	}
}
