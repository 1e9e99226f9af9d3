package server

import (
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/cluster"
	"governor.dev/governor/cmd/internal/engine"
)

// msgLeaderLost ends a watch on a member that stopped leading its cluster.
const msgLeaderLost = "This governord stopped leading its cluster, which ended the watch. Watch again at the new leader: it has the same state, and the watch starts with the current state."

// leading is a Backend that leads for a while: a cluster member. An open
// watch ends once it stops leading, since only the leader's answers are
// linearizable.
type leading interface {
	// observeLeading returns a channel that receives once this member
	// stops leading (or, if it does not lead now, once its state changes
	// from anything but leading), and the function that stops observing.
	observeLeading() (<-chan raft.Observation, func())
}

// feeding is a Backend whose engine feeds the watch hub itself, as a
// cluster member's replica does with each command it applies. A single
// governord's is fed by the daemon through Publish.
type feeding interface {
	feed(to cluster.Fed)
}

// observeLeading observes the backend's leadership for a watch; outside a
// cluster it returns a channel that never receives.
func (s *Server) observeLeading() (<-chan raft.Observation, func()) {
	if l, ok := s.store.(leading); ok {
		return l.observeLeading()
	}
	return nil, func() {}
}

func (b replicated) observeLeading() (<-chan raft.Observation, func()) {
	ch := make(chan raft.Observation, 1)
	o := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		st, ok := o.Data.(raft.RaftState)
		return ok && st != raft.Leader
	})
	r := b.Raft()
	r.RegisterObserver(o)
	return ch, func() { r.DeregisterObserver(o) }
}

func (b replicated) feed(to cluster.Fed) { b.FSM().Feed(to) }

// hubFeed feeds the watch hub from a cluster member's replica: the events
// of every command it applies, once committed, on its apply goroutine,
// which publish does not block for long (it never waits on a watcher).
type hubFeed struct{ s *Server }

var _ cluster.Fed = hubFeed{}

// Load reloads the hub from the replica's engine, closing every watch: a
// snapshot that replaced the engine may skip changes they would have seen.
func (f hubFeed) Load(e *engine.Engine) { f.s.hub.reload(e.Dump()) }

func (f hubFeed) Applied(evs []*engine.Event) { f.s.hub.publish(evs, f.s.store.Local()) }
