package cluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
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
// the log's segment files.
const logCacheSize = 4096

// walDir is the directory, inside a member's data directory, that holds
// its log and stable store.
const walDir = "wal"

// boltLog is the file an earlier governord kept its log and stable store
// in, inside the data directory.
const boltLog = "raft.db"

// openDiskStores opens the log and stable store (raft-wal in dir/wal: log
// segment files, synced on every append, with the latest entries also
// cached in memory, and a small bbolt file for the stable store and the
// segment list) and the snapshot store (dir/snapshots). dir must exist,
// hold no log written by an earlier governord (refuseBoltLog) and be
// locked by the caller (lockDir). Closing the returned *wal.WAL closes the
// log and stable store; it must be closed before the same dir is opened
// again, which otherwise waits for it.
func openDiskStores(dir string, logger hclog.Logger) (raft.LogStore, *wal.WAL, raft.SnapshotStore, error) {
	if err := os.MkdirAll(filepath.Join(dir, walDir), 0o700); err != nil {
		return nil, nil, nil, fmt.Errorf("create the raft log directory: %w", err)
	}
	w, err := wal.Open(filepath.Join(dir, walDir), wal.WithLogger(logger.Named("wal")))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open raft log store: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		_ = w.Close()
		return nil, nil, nil, fmt.Errorf("open raft snapshot store: %w", err)
	}
	logs, err := raft.NewLogCache(logCacheSize, w)
	if err != nil {
		_ = w.Close()
		return nil, nil, nil, fmt.Errorf("open raft log cache: %w", err)
	}
	return logs, w, snaps, nil
}

// diskStores closes a member's log and stable store, then gives up its
// data directory's lock.
type diskStores struct {
	log  io.Closer
	lock *os.File
}

func (d diskStores) Close() error {
	return errors.Join(d.log.Close(), d.lock.Close())
}

// refuseBoltLog fails when dir holds raft.db, the log of a member from
// before the log moved to raft-wal: this member would start with an empty
// log and vote and accept entries as if it had never been one.
func refuseBoltLog(dir string) error {
	_, err := os.Stat(filepath.Join(dir, boltLog))
	switch {
	case err == nil:
		return fmt.Errorf("the cluster data directory %s holds %s, a raft log written by an earlier governord, which this version does not read (it keeps the log in %s/): remove this member from the cluster, empty the directory and add it back as a new member, which copies the state from the leader, or, for a whole cluster of earlier members, start a new cluster", dir, boltLog, walDir)
	case errors.Is(err, os.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("check the cluster data directory for an earlier raft log: %w", err)
	}
}
