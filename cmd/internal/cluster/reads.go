package cluster

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// reads makes the leader's reads linearizable. Before its first read in a
// term the leader waits for a Barrier, so every entry committed before it
// became leader is applied; after each read it confirms with a quorum that
// it still was the leader (VerifyLeader), so no newer leader could have
// acknowledged a write the read missed. Concurrent reads share a check:
// one runs at a time, and every read that finished meanwhile joins the
// next, which starts after their reads.
type reads struct {
	mu   sync.Mutex    // held through a barrier, so the reads of its term wait for it
	term atomic.Uint64 // the term whose barrier is done

	vmu     sync.Mutex // guards the fields below
	next    *check     // the check reads join; it starts once the running one ends
	running bool
}

// check is one VerifyLeader that reads share.
type check struct {
	done   chan struct{}
	err    error
	joined int // reads waiting for it; guarded by reads.vmu
}

// ready waits for the barrier of term (barrier), once per term.
func (rd *reads) ready(term uint64, barrier func() error) error {
	if rd.term.Load() == term {
		return nil
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.term.Load() == term {
		return nil
	}
	if err := barrier(); err != nil {
		return err
	}
	rd.term.Store(term)
	return nil
}

// verify confirms leadership with a check (leader, raft's VerifyLeader)
// that starts after the call.
func (rd *reads) verify(leader func() error) error {
	rd.vmu.Lock()
	if rd.next == nil {
		rd.next = &check{done: make(chan struct{})}
	}
	ch := rd.next
	ch.joined++
	if !rd.running {
		rd.running = true
		go rd.run(leader)
	}
	rd.vmu.Unlock()
	<-ch.done
	return ch.err
}

// run runs checks one after another while reads wait for one.
func (rd *reads) run(leader func() error) {
	for {
		rd.vmu.Lock()
		ch := rd.next
		rd.next = nil
		if ch == nil {
			rd.running = false
			rd.vmu.Unlock()
			return
		}
		rd.vmu.Unlock()
		ch.err = leader()
		close(ch.done)
	}
}

// read runs f on the leader's replica between the barrier of this term and
// a leadership check; on a follower, when the check fails, or when the term
// changed meanwhile (the member may have lost and won the leadership again,
// and not yet applied what another leader committed in between), it
// answers *ErrNotLeader and nothing f read. A read no member can serve now
// is held, as a command is (see hold).
func read[T any](n *Node, f func(e *engine.Engine) (T, error)) (T, error) {
	return hold(context.Background(), n, func() (T, error) { return readOnce(n, f) })
}

func readOnce[T any](n *Node, f func(e *engine.Engine) (T, error)) (T, error) {
	var zero T
	term := n.raft.CurrentTerm()
	if n.raft.State() != raft.Leader {
		return zero, n.notLeader()
	}
	if err := n.reads.ready(term, n.barrier); err != nil {
		return zero, n.notLeader()
	}
	v, err := f(n.fsm.Engine())
	if verr := n.reads.verify(n.verifyLeader); verr != nil || n.raft.CurrentTerm() != term {
		return zero, n.notLeader()
	}
	return v, err
}

func (n *Node) barrier() error      { return n.await(n.raft.Barrier(n.cfg.ApplyTimeout)) }
func (n *Node) verifyLeader() error { return n.await(n.raft.VerifyLeader()) }

// described is what Describe answers.
type described struct {
	node     engine.NodeInfo
	children []engine.NodeInfo
	next     engine.ID
}

// Describe reads a node and a page of its children, as engine.Engine.Describe.
func (n *Node) Describe(c *engine.Call, id engine.ID, page *engine.Page) (engine.NodeInfo, []engine.NodeInfo, engine.ID, error) {
	d, err := read(n, func(e *engine.Engine) (described, error) {
		var d described
		var err error
		d.node, d.children, d.next, err = e.Describe(c, id, page)
		return d, err
	})
	return d.node, d.children, d.next, err
}

// Validate reads a lease, as engine.Engine.Validate.
func (n *Node) Validate(c *engine.Call, id engine.ID) (engine.LeaseInfo, error) {
	return read(n, func(e *engine.Engine) (engine.LeaseInfo, error) { return e.Validate(c, id) })
}

// Explain says what a consume would meet, as engine.Engine.Explain.
func (n *Node) Explain(c *engine.Call, id engine.ID, name string, amount int64) (engine.Explanation, error) {
	return read(n, func(e *engine.Engine) (engine.Explanation, error) { return e.Explain(c, id, name, amount) })
}

// SessionByToken finds a session by its token, as engine.Engine.SessionByToken.
func (n *Node) SessionByToken(token [32]byte) (engine.SessionInfo, bool, error) {
	type found struct {
		s  engine.SessionInfo
		ok bool
	}
	f, err := read(n, func(e *engine.Engine) (found, error) {
		s, ok := e.SessionByToken(token)
		return found{s, ok}, nil
	})
	return f.s, f.ok, err
}
