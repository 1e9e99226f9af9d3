package cluster

import (
	"sync"

	"governor.dev/governor/cmd/internal/engine"
)

// beats coalesces heartbeats into one renewal command per batch. The first
// caller applies the batch of everyone waiting; whoever arrives while it is
// in the log waits for the next batch, which the first of them applies. No
// caller applies more than one batch, so none is kept by the others.
type beats struct {
	mu       sync.Mutex // guards the fields below
	pending  []pendingBeat
	flushing bool // a caller is applying a batch
}

type pendingBeat struct {
	session engine.ID
	answer  chan beatAnswer
}

type beatAnswer struct {
	Beat
	seq  uint64 // Call.Seq after the batch
	lead bool   // no answer yet: apply the next batch
}

// Heartbeat renews the caller's session, as engine.Engine.Heartbeat, in one
// command with the renewals that arrive meanwhile.
func (n *Node) Heartbeat(c *engine.Call) (engine.SessionInfo, error) {
	answer := make(chan beatAnswer, 1)
	n.beats.mu.Lock()
	n.beats.pending = append(n.beats.pending, pendingBeat{c.Session, answer})
	lead := !n.beats.flushing
	n.beats.flushing = true
	n.beats.mu.Unlock()
	if lead {
		n.flushBeats()
	}
	for {
		b := <-answer
		if !b.lead {
			c.Seq = b.seq
			return b.Session, b.Err
		}
		n.flushBeats()
	}
}

// flushBeats applies the renewals waiting now as one command, answers
// each, and hands the next batch to the first caller waiting for it.
func (n *Node) flushBeats() {
	n.beats.mu.Lock()
	batch := n.beats.pending
	n.beats.pending = nil
	n.beats.mu.Unlock()
	ids := make([]engine.ID, len(batch))
	for i, p := range batch {
		ids[i] = p.session
	}
	done := &engine.Call{}
	r, _, err := n.apply(done, &Command{Op: OpHeartbeat, Renew: ids})
	for i, p := range batch {
		a := beatAnswer{Beat: Beat{Err: err}, seq: done.Seq}
		if err == nil {
			a.Beat = r.Beats[i]
		}
		p.answer <- a
	}
	n.beats.mu.Lock()
	defer n.beats.mu.Unlock()
	if len(n.beats.pending) == 0 {
		n.beats.flushing = false
		return
	}
	n.beats.pending[0].answer <- beatAnswer{lead: true}
}
