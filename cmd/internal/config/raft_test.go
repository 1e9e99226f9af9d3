package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// The timing keys are read, and raft's defaults stand for those left out.
func TestClusterRaftTiming(t *testing.T) {
	yaml := "metrics_listen: off\n" + member("/d") + "  heartbeat_timeout: 300ms\n  election_timeout: 400ms\n  leader_lease_timeout: 150ms\n  snapshot_threshold: 100\n"
	c, err := Parse([]byte(yaml), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	rc := c.Cluster.RaftConfig(raft.DefaultConfig())
	if rc.HeartbeatTimeout != 300*time.Millisecond || rc.ElectionTimeout != 400*time.Millisecond ||
		rc.LeaderLeaseTimeout != 150*time.Millisecond || rc.SnapshotThreshold != 100 || rc.SnapshotInterval != 120*time.Second || rc.LocalID != "n1" {
		t.Fatalf("raft config from the file: %+v", rc)
	}
	c, err = Parse([]byte("metrics_listen: off\n"+member("/d")), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	d := raft.DefaultConfig()
	if got := c.Cluster.RaftConfig(raft.DefaultConfig()); got.HeartbeatTimeout != time.Second || got.ElectionTimeout != d.ElectionTimeout || got.LeaderLeaseTimeout != d.LeaderLeaseTimeout ||
		got.SnapshotInterval != d.SnapshotInterval || got.SnapshotThreshold != d.SnapshotThreshold {
		t.Fatalf("timing without the keys: %+v, want raft's defaults", got)
	}
}

// Timing raft would refuse is refused first with the key and a sentence.
func TestClusterRaftTimingMistakes(t *testing.T) {
	for name, c := range map[string]struct{ keys, want string }{
		"lease over heartbeat": {"  heartbeat_timeout: 300ms\n  leader_lease_timeout: 400ms\n",
			"cluster.leader_lease_timeout: 400ms is longer than heartbeat_timeout (300ms): a leader must stop leading before its followers stand for election; make it at most 300ms"},
		"election under heartbeat": {"  heartbeat_timeout: 2s\n  election_timeout: 1s\n",
			"cluster.election_timeout: 1s is shorter than heartbeat_timeout (2s); make it at least 2s"},
		"lease over the default heartbeat": {"  leader_lease_timeout: 2s\n",
			"cluster.leader_lease_timeout: 2s is longer than heartbeat_timeout (1s)"},
		"too short":          {"  heartbeat_timeout: 1ms\n", "cluster.heartbeat_timeout: must be at least 5ms, or left out for raft's default; got 1ms"},
		"negative threshold": {"  snapshot_threshold: -1\n", "cluster.snapshot_threshold: must be at least 1 log entry, or left out for raft's default; got -1"},
		"short interval":     {"  snapshot_interval: 1ns\n", "cluster.snapshot_interval: must be at least 5ms, or left out for raft's default; got 1ns"},
	} {
		_, err := Parse([]byte("metrics_listen: off\n"+member("/d")+c.keys), "g.yaml", env(nil))
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}
