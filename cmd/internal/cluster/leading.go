package cluster

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// recheck is how long a held call waits at most before it looks at the
// leadership again when no change was observed: raft ends a transfer that
// failed without any observation.
const recheck = 5 * time.Millisecond

// leading wakes the calls a member holds while the leadership moves. Its
// channel is closed, and replaced, whenever raft observes a change of
// leader or of this member's state, and when a transfer this member ran
// ends. Open sets the first channel.
type leading struct {
	changed atomic.Pointer[chan struct{}] // closed at the next change

	// While a transfer this member runs is under way it takes no command
	// (moving), and the transfer starts once every command already handed
	// to raft is answered (inLog): none is left in flight when the
	// leadership moves, whose outcome would then be unknown.
	moving atomic.Bool
	inLog  sync.RWMutex // held for reading by each command from raft.Apply to its answer
}

func (l *leading) init() {
	ch := make(chan struct{})
	l.changed.Store(&ch)
}

// next is the channel closed at the next change.
func (l *leading) next() <-chan struct{} { return *l.changed.Load() }

// signal wakes every call waiting for a change.
func (l *leading) signal() {
	ch := make(chan struct{})
	close(*l.changed.Swap(&ch))
}

// watch signals each leadership observation of raft until the member
// stops. It is the member's second background goroutine, started by Open
// and stopped by Shutdown.
func (n *Node) watch() {
	defer n.done.Done()
	ch := make(chan raft.Observation, 64)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.LeaderObservation, raft.RaftState:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(obs)
	defer n.raft.DeregisterObserver(obs)
	for {
		select {
		case <-n.stop:
			return
		case <-ch:
			n.leading.signal()
		}
	}
}

// hold runs try, and runs it again while it is refused for want of a
// leader to name: this member leads but takes no command (a transfer is
// under way), or it knows no leader (an election is). A refusal that names
// another member as the leader ends the hold at once, and so does any
// other answer. try must change nothing when it is refused with
// *ErrNotLeader. The hold lasts at most LeaderWait, and ends when ctx ends
// or the member stops; the last refusal is then the answer.
func hold[T any](ctx context.Context, n *Node, try func() (T, error)) (T, error) {
	until := time.Now().Add(n.cfg.LeaderWait)
	for {
		changed := n.leading.next()
		v, err := try()
		var nl *ErrNotLeader
		if !errors.As(err, &nl) || nl.Leader != "" || !n.pause(ctx, changed, until) {
			return v, err
		}
	}
}

// AwaitLeader returns nil once this member leads, or *ErrNotLeader naming
// the member that does. While neither is known it waits, as a held call
// does: at most LeaderWait, and not past ctx.
func (n *Node) AwaitLeader(ctx context.Context) error {
	_, err := hold(ctx, n, func() (struct{}, error) {
		if n.raft.State() != raft.Leader {
			return struct{}{}, n.notLeader()
		}
		return struct{}{}, nil
	})
	return err
}

// pause waits for changed, at most recheck and never past until; it
// reports false when until has passed, ctx ended or the member stopped.
func (n *Node) pause(ctx context.Context, changed <-chan struct{}, until time.Time) bool {
	left := time.Until(until)
	if left <= 0 {
		return false
	}
	t := time.NewTimer(min(left, recheck))
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-n.stop:
		return false
	case <-ctx.Done():
		return false
	}
	return true
}
