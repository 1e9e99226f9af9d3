package config

import (
	"time"

	"github.com/hashicorp/raft"
)

// minRaftTime is the shortest timeout raft accepts.
const minRaftTime = 5 * time.Millisecond

// RaftConfig is raft's configuration for this member: a copy of base with
// its node id, and the section's timing where it is set (base's where it
// is 0).
func (c Cluster) RaftConfig(base *raft.Config) *raft.Config {
	cp := *base
	rc := &cp
	rc.LocalID = raft.ServerID(c.NodeID)
	for _, d := range c.durations(rc) {
		if d.v != 0 {
			*d.to = d.v
		}
	}
	if c.SnapshotThreshold != 0 {
		rc.SnapshotThreshold = uint64(c.SnapshotThreshold)
	}
	return rc
}

// raftDuration is one duration key of the section: its name, its value in
// the file, and the field of a raft config it sets.
type raftDuration struct {
	key string
	v   time.Duration
	to  *time.Duration
}

// durations are the section's duration keys, each with its field of rc.
func (c Cluster) durations(rc *raft.Config) []raftDuration {
	return []raftDuration{
		{"heartbeat_timeout", c.HeartbeatTimeout, &rc.HeartbeatTimeout},
		{"election_timeout", c.ElectionTimeout, &rc.ElectionTimeout},
		{"leader_lease_timeout", c.LeaderLeaseTimeout, &rc.LeaderLeaseTimeout},
		{"snapshot_interval", c.SnapshotInterval, &rc.SnapshotInterval},
	}
}

// checkRaftTiming checks the timing keys as raft does, each with its own
// sentence and the values raft will run with, then lets raft check the
// whole.
func (c Cluster) checkRaftTiming(k *checker) {
	rc := c.RaftConfig(raft.DefaultConfig())
	before := len(k.problems)
	for _, d := range c.durations(rc) {
		if d.v != 0 && d.v < minRaftTime {
			k.add("cluster."+d.key, "must be at least %s, or left out for raft's default; got %s", minRaftTime, d.v)
		}
	}
	if c.SnapshotThreshold < 0 {
		k.add("cluster.snapshot_threshold", "must be at least 1 log entry, or left out for raft's default; got %d", c.SnapshotThreshold)
	}
	if len(k.problems) > before {
		return
	}
	if rc.LeaderLeaseTimeout > rc.HeartbeatTimeout {
		k.add("cluster.leader_lease_timeout", "%s is longer than heartbeat_timeout (%s): a leader must stop leading before its followers stand for election; make it at most %s", rc.LeaderLeaseTimeout, rc.HeartbeatTimeout, rc.HeartbeatTimeout)
	}
	if rc.ElectionTimeout < rc.HeartbeatTimeout {
		k.add("cluster.election_timeout", "%s is shorter than heartbeat_timeout (%s); make it at least %s", rc.ElectionTimeout, rc.HeartbeatTimeout, rc.HeartbeatTimeout)
	}
	if len(k.problems) > before || c.NodeID == "" {
		return
	}
	if err := raft.ValidateConfig(rc); err != nil {
		k.add("cluster", "raft refuses this timing: %v", err)
	}
}
