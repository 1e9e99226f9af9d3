package cluster

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// DefaultRaftConfig is the raft config a member runs with when Config.Raft
// is nil (governord's): raft's default, but the leader takes up to 1,024
// waiting commands into one append (one log write and fsync, one message
// to each follower) instead of 64. raft's apply channel stays unbuffered
// (BatchApplyCh off): a command buffered there when raft shuts down is
// never answered, while one waiting to enter it fails.
func DefaultRaftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.MaxAppendEntries = 1024
	return rc
}

// logCacheSize is how many of the latest log entries a member keeps in
// memory as well as on disk, so that the leader sending them to its
// followers and a follower applying what it stored read no entry back from
// bolt (each read is a transaction and a decode).
const logCacheSize = 4096

// openDiskStores opens the log and stable store (raft.db, bolt, synced on
// every append, with the latest entries also cached in memory) and the
// snapshot store in dir, which must exist. The bolt store is also the
// stable store, and closing it closes both.
func openDiskStores(dir string) (raft.LogStore, *raftboltdb.BoltStore, raft.SnapshotStore, error) {
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open raft log store: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		_ = bolt.Close()
		return nil, nil, nil, fmt.Errorf("open raft snapshot store: %w", err)
	}
	logs, err := raft.NewLogCache(logCacheSize, bolt)
	if err != nil {
		_ = bolt.Close()
		return nil, nil, nil, fmt.Errorf("open raft log cache: %w", err)
	}
	return logs, bolt, snaps, nil
}
