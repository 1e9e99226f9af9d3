package cluster

import (
	"sync"

	"governor.dev/governor/cmd/internal/engine"
)

// beats coalesces heartbeats into one renewal command per batch: the first
// caller applies the batch, and whoever arrives while it is in the log waits
// for the next, which that caller applies too.
type beats struct {
	mu       sync.Mutex // guards the fields below
	pending  []pendingBeat
	flushing bool
}

type pendingBeat struct {
	session engine.ID
	answer  chan beatAnswer
}

type beatAnswer struct {
	Beat
	seq uint64 // Call.Seq after the batch
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
	b := <-answer
	c.Seq = b.seq
	return b.Session, b.Err
}

// flushBeats applies the waiting renewals a batch at a time until none
// wait.
func (n *Node) flushBeats() {
	for {
		n.beats.mu.Lock()
		batch := n.beats.pending
		n.beats.pending = nil
		if len(batch) == 0 {
			n.beats.flushing = false
			n.beats.mu.Unlock()
			return
		}
		n.beats.mu.Unlock()
		ids := make([]engine.ID, len(batch))
		for i, p := range batch {
			ids[i] = p.session
		}
		done := &engine.Call{}
		r, _, err := n.apply(done, &Command{Op: OpHeartbeat, Renew: ids})
		for i, p := range batch {
			a := beatAnswer{Beat{Err: err}, done.Seq}
			if err == nil {
				a.Beat = r.Beats[i]
			}
			p.answer <- a
		}
	}
}
