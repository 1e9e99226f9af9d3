package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the file, inside a member's data directory, that the member
// running there holds an exclusive flock on.
const lockName = "member.lock"

// lockDir takes an exclusive flock on dir's lock file without waiting, so
// a second member given the same data directory, in this process or
// another, is refused at once instead of waiting for raft-wal's own lock.
// The kernel releases the lock when the holder closes the file or dies, so
// a member killed with SIGKILL leaves nothing to clean up.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lock file of the cluster data directory: %w", err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return f, nil
	}
	_ = f.Close()
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("the cluster data directory %s is held by another member, in this process or another one: stop that member first, or give each member its own data directory", dir)
	}
	return nil, fmt.Errorf("lock the cluster data directory %s: %w", dir, err)
}
