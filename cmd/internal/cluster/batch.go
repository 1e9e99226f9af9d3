package cluster

import (
	"slices"
	"sync"

	"governor.dev/governor/cmd/internal/engine"
)

// batches puts the consumes that arrive together into one log entry (an
// OpBatch), so raft's cost per entry (encoding it for the log and for each
// follower, its future, its turn through raft's loops) is paid once for
// all of them. One caller at a time is the sender: it puts its batch in
// raft's queue, then hands the batch gathered meanwhile to one of that
// batch's callers, and only then waits for its own entry. Batches thus
// enter the log in the order they were sent, several can be in the log at
// once, and a caller alone (no sender busy) sends at once, in a batch of
// its own. A batch has two channels, not one per caller.
type batches struct {
	mu      sync.Mutex // guards the fields below
	next    *batch     // gathering while a sender is busy; nil if none
	sending bool       // a caller is putting a batch in raft's queue
}

// batch is the commands of one entry and, once done is closed, its outcome.
type batch struct {
	cmds []*Command
	turn chan struct{} // holds one token: the caller who takes it sends
	done chan struct{} // closed once the entry applied or failed

	results []*Result // one per command, once done
	index   uint64    // the entry's log index, once done
	err     error     // raft's failure, as applyFailed answers it
}

// join puts cmd in the batch now gathering, sends it if no caller is
// sending, and returns what the leader's replica answered to cmd.
func (n *Node) join(c *engine.Call, cmd *Command) (*Result, uint64, error) {
	bs := &n.batches
	bs.mu.Lock()
	b := bs.next
	if b == nil {
		b = &batch{turn: make(chan struct{}, 1), done: make(chan struct{})}
		bs.next = b
	}
	i := len(b.cmds)
	b.cmds = append(b.cmds, cmd)
	if !bs.sending {
		bs.sending, bs.next = true, nil
		b.turn <- struct{}{}
	}
	bs.mu.Unlock()
	select {
	case <-b.turn:
		n.send(b)
	case <-b.done:
	}
	if b.err != nil {
		return nil, 0, b.err
	}
	return answer(c, b.results[i], b.index)
}

// send stamps b's commands with the leader's time, puts them in raft's
// queue as one entry (a lone command as itself), hands the sender's turn
// to the batch gathered meanwhile, if any, and waits for b's entry. While
// a transfer this member runs is under way it refuses the batch, as
// submit does a lone command.
func (n *Node) send(b *batch) {
	defer close(b.done)
	f, err := n.propose(func() []byte {
		now := n.cfg.Wall().UnixNano()
		for _, c := range b.cmds {
			c.Now = now
		}
		if len(b.cmds) == 1 {
			return b.cmds[0].Encode()
		}
		return (&Command{Op: OpBatch, Now: now, Batch: b.cmds}).Encode()
	}, n.passTurn)
	if err != nil {
		b.err = err
		return
	}
	r := f.Response().(*Result)
	b.index, b.results = f.Index(), r.Batch
	if r.Batch == nil {
		// A lone command, or a batch the replica could not read: its
		// result (the error) answers every command.
		b.results = slices.Repeat([]*Result{r}, len(b.cmds))
	}
}

// passTurn hands the sender's turn to the batch gathered meanwhile, if any.
func (n *Node) passTurn() {
	bs := &n.batches
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if next := bs.next; next != nil {
		bs.next = nil
		next.turn <- struct{}{}
	} else {
		bs.sending = false
	}
}
