package config

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Cluster makes governord one member of a replicated cluster: every member
// applies the same commands in the same order, and the leader answers the
// calls. Its state lives in DataDir, so a member has no database_url.
// Without the section (every key empty) governord runs alone.
type Cluster struct {
	// NodeID is this member's id: one of Peers.
	NodeID string `yaml:"node_id"`
	// Bind is the host:port the member listens on for the other members;
	// default: its own entry's raft address.
	Bind string `yaml:"bind"`
	// Peers lists every member, this one too: its id, the address the
	// others reach it at, and its API address, which a member that is not
	// the leader names to clients.
	Peers []Peer `yaml:"peers"`
	// DataDir holds the member's log, its stable state and its snapshots.
	// It must be writable and belong to this member alone.
	DataDir string `yaml:"data_dir"`
	// Bootstrap starts a new cluster of Peers when DataDir holds no state
	// yet. Set it on every member of a new cluster, or on one; a member
	// with state ignores it.
	Bootstrap bool `yaml:"bootstrap"`

	// How raft keeps time and takes snapshots (raft.go); 0 (a key left
	// out) is raft's own default.

	// HeartbeatTimeout is how long a follower goes without hearing from the
	// leader before it stands for election. Default: 1s.
	HeartbeatTimeout time.Duration `yaml:"heartbeat_timeout"`
	// ElectionTimeout is how long a candidate waits for the votes before it
	// tries again; at least heartbeat_timeout. Default: 1s.
	ElectionTimeout time.Duration `yaml:"election_timeout"`
	// LeaderLeaseTimeout is how long a leader goes on leading without
	// hearing from a quorum; at most heartbeat_timeout. Default: 500ms.
	LeaderLeaseTimeout time.Duration `yaml:"leader_lease_timeout"`
	// SnapshotInterval is how often the member checks whether to take a
	// snapshot (with jitter). Default: 2m.
	SnapshotInterval time.Duration `yaml:"snapshot_interval"`
	// SnapshotThreshold is how many log entries since the last snapshot
	// make the member take the next. Default: 8192.
	SnapshotThreshold int64 `yaml:"snapshot_threshold"`

	// TLS secures the members' traffic when the API uses TLS (ClusterTLS).
	TLS ClusterTLS `yaml:"tls"`
}

// Peer is one member of a cluster.
type Peer struct {
	// ID names the member, unique in the cluster.
	ID string `yaml:"id"`
	// Raft is the host:port the other members reach it at.
	Raft string `yaml:"raft"`
	// API is the host:port of its API, as clients reach it.
	API string `yaml:"api"`
}

// Enabled reports whether the file has a cluster section.
func (c Cluster) Enabled() bool {
	return c.NodeID != "" || c.Bind != "" || len(c.Peers) > 0 || c.DataDir != "" || c.Bootstrap || c.TLS.CAFile != ""
}

// Self is this member's entry in Peers, and whether there is one.
func (c Cluster) Self() (Peer, bool) {
	for _, p := range c.Peers {
		if p.ID == c.NodeID {
			return p, true
		}
	}
	return Peer{}, false
}

// BindAddress is the address the member listens on for the others.
func (c Cluster) BindAddress() string {
	if c.Bind != "" {
		return c.Bind
	}
	self, _ := c.Self()
	return self.Raft
}

// checkCluster checks the cluster section, if there is one.
func (c *Config) checkCluster(k *checker) {
	cl := c.Cluster
	if !cl.Enabled() {
		return
	}
	if c.DatabaseURL != "" {
		k.add("database_url", "a cluster member keeps its state in cluster.data_dir, not in a database: remove database_url (or GOVERNOR_DATABASE_URL), or remove the cluster section to run alone")
	}
	if len(c.Adaptive) > 0 {
		k.add("adaptive", "a cluster member does not run adaptive controllers yet (issue 16): remove the adaptive section, or the cluster section")
	}
	if cl.DataDir == "" {
		k.add("cluster.data_dir", "required: the directory that holds this member's log and snapshots")
	}
	if cl.Bind != "" && !validAddress(cl.Bind) {
		k.add("cluster.bind", "must be host:port, such as 0.0.0.0:7610; got %q", cl.Bind)
	}
	checkPeers(k, cl.Peers)
	cl.checkRaftTiming(k)
	c.checkClusterTLS(k)
	if cl.NodeID == "" {
		k.add("cluster.node_id", "required: this member's id, one of cluster.peers")
	} else if _, ok := cl.Self(); !ok && len(cl.Peers) > 0 {
		k.add("cluster.node_id", "%q is none of cluster.peers' ids: list this member among the peers too", cl.NodeID)
	}
}

// checkPeers checks each peer and that ids and addresses are unique.
func checkPeers(k *checker, peers []Peer) {
	if len(peers) == 0 {
		k.add("cluster.peers", "required: every member of the cluster, this one too, each with id, raft and api")
	}
	seen := map[string]string{} // a value in use, by kind and value, to the path that used it first
	for i, p := range peers {
		at := fmt.Sprintf("cluster.peers[%d]", i)
		if p.ID == "" {
			k.add(at+".id", "required: the member's id, unique in the cluster")
		}
		for _, f := range []struct{ field, value, kind string }{{"id", p.ID, "id"}, {"raft", p.Raft, "address"}, {"api", p.API, "address"}} {
			path := at + "." + f.field
			if f.field != "id" && !validAddress(f.value) {
				k.add(path, "must be host:port that the other members can reach, such as 10.0.0.1:7610; got %q", f.value)
				continue
			}
			if f.value == "" {
				continue
			}
			key := f.kind + "\x00" + f.value
			if first, dup := seen[key]; dup {
				k.add(path, "%q is already used by %s: every member needs its own id and its own addresses", f.value, first)
				continue
			}
			seen[key] = path
		}
	}
}

// PrepareDataDir creates the cluster's data directory if it is missing and
// checks that this process can write in it.
func (c Cluster) PrepareDataDir() error {
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("cluster.data_dir: cannot create %s: %w; give a directory this user may write in", c.DataDir, err)
	}
	probe, err := os.CreateTemp(c.DataDir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("cluster.data_dir: cannot write in %s: %w; give a directory this user may write in", c.DataDir, err)
	}
	name := probe.Name()
	_ = probe.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("cluster.data_dir: cannot remove %s: %w", filepath.Base(name), err)
	}
	return nil
}
