package cluster

import (
	"sync"
	"sync/atomic"
)

// grace makes a new leader's first command in its term an OpRevive: every
// session gets one fresh TTL from then, as after a restart of a single
// governord, so a session whose heartbeats found no leader during the
// election does not lapse on the first command that looks at the time.
type grace struct {
	mu   sync.Mutex    // held while the revive is in the log, so commands wait for it
	term atomic.Uint64 // the term whose revive is applied
}

// graceOnce applies the revive of the current term if it is not yet.
func (n *Node) graceOnce() error {
	term := n.raft.CurrentTerm()
	if n.grace.term.Load() == term {
		return nil
	}
	n.grace.mu.Lock()
	defer n.grace.mu.Unlock()
	if n.grace.term.Load() == term {
		return nil
	}
	if _, _, err := n.submit(nil, &Command{Op: OpRevive}); err != nil {
		return err
	}
	if err := n.announce(); err != nil {
		return err
	}
	n.grace.term.Store(term)
	return nil
}
