package cluster

import (
	"time"

	"github.com/hashicorp/raft"
)

// duties is the member's one background goroutine, started by Open and
// stopped by Shutdown. While the member leads, it puts a Reap in the log
// every ReapEvery, so what time decides (a session lapsed, a deadline
// passed, a hold ran out) is decided in the log at a stamped time even with
// no call to take it; each replica's engine re-checks at that time what is
// due, so a Reap that arrives late or twice decides nothing twice. Every
// CheckEvery entries it asks the replicas to compare checksums.
func (n *Node) duties() {
	defer n.done.Done()
	tick := time.NewTicker(n.cfg.ReapEvery)
	defer tick.Stop()
	var checked uint64
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		if n.raft.State() != raft.Leader {
			continue
		}
		_, _, _ = n.apply(nil, &Command{Op: OpReap}) // refused or lost: the next tick (or the next leader) reaps
		if applied := n.raft.AppliedIndex(); applied >= checked+n.cfg.CheckEvery {
			if n.CompareChecksums() == nil {
				checked = applied
			}
		}
	}
}

// CompareChecksums puts a checksum in the log, then the leader's checksum
// at that point, which every replica compares with its own; a replica that
// differs records a Mismatch (FSM.Mismatches). It returns once both
// commands are applied on the leader.
func (n *Node) CompareChecksums() error {
	r, index, err := n.apply(nil, &Command{Op: OpChecksum})
	if err != nil {
		return err
	}
	_, _, err = n.apply(nil, &Command{Op: OpCompare, Waiter: index, Sum: r.Sum})
	return err
}
