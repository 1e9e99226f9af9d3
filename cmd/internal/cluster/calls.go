package cluster

import (
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// The engine's mutating calls, replicated. Each has the engine method's
// signature and answers what the leader's replica answered; it fails with
// *ErrNotLeader on a follower and ErrUnknownOutcome when the leader lost
// track of the command (retry it with the same request id).

// Create creates a node, as engine.Engine.Create.
func (n *Node) Create(c *engine.Call, parent engine.ID, spec engine.Spec) (engine.NodeInfo, error) {
	r, _, err := n.apply(c, &Command{Op: OpCreate, Target: parent, Spec: &spec})
	return ok(r).Node, err
}

// Ensure finds or creates a node, as engine.Engine.Ensure.
func (n *Node) Ensure(c *engine.Call, parent engine.ID, spec engine.Spec, charge *engine.Charge) (engine.NodeInfo, bool, error) {
	r, _, err := n.apply(c, &Command{Op: OpEnsure, Target: parent, Spec: &spec, Charge: charge})
	return ok(r).Node, ok(r).Created, err
}

// Consume charges a quota, as engine.Engine.Consume.
func (n *Node) Consume(c *engine.Call, id engine.ID, resource string, amount int64) error {
	_, _, err := n.apply(c, &Command{Op: OpConsume, Target: id, Name: resource, Amount: amount})
	return err
}

// ConsumeWith charges with options, as engine.Engine.ConsumeWith.
func (n *Node) ConsumeWith(c *engine.Call, id engine.ID, resource string, amount int64, o engine.ConsumeOptions) (engine.ConsumeResult, error) {
	r, _, err := n.apply(c, &Command{Op: OpConsumeWith, Target: id, Name: resource, Amount: amount, Options: o})
	return ok(r).Consume, err
}

// ConsumeKeyed charges a keyed rate, as engine.Engine.ConsumeKeyed.
func (n *Node) ConsumeKeyed(c *engine.Call, k engine.KeyedLimit, amount int64, o engine.ConsumeOptions) (engine.ConsumeResult, error) {
	r, _, err := n.apply(c, &Command{Op: OpConsumeKeyed, Keyed: &k, Amount: amount, Options: o})
	return ok(r).Consume, err
}

// Cancel ends a subtree as cancelled, as engine.Engine.Cancel.
func (n *Node) Cancel(c *engine.Call, id engine.ID) error {
	_, _, err := n.apply(c, &Command{Op: OpCancel, Target: id})
	return err
}

// Close ends a subtree as done, as engine.Engine.Close.
func (n *Node) Close(c *engine.Call, id engine.ID) error {
	_, _, err := n.apply(c, &Command{Op: OpClose, Target: id})
	return err
}

// Acquire takes a lease or queues for one, as engine.Engine.Acquire. The
// waiter is the leader replica's: its grant is decided in the log, so it
// arrives also if this member stops being the leader meanwhile.
func (n *Node) Acquire(c *engine.Call, id engine.ID, class string, maxHold time.Duration) (engine.LeaseInfo, *engine.Waiter, error) {
	r, _, err := n.apply(c, &Command{Op: OpAcquire, Target: id, Name: class, Span: maxHold})
	return ok(r).Lease, ok(r).Waiter, err
}

// TryAcquire takes a lease if one fits now, as engine.Engine.TryAcquire:
// one command, so no waiter exists between the refusal and its withdrawal.
func (n *Node) TryAcquire(c *engine.Call, id engine.ID, class string, maxHold time.Duration) (engine.LeaseInfo, error) {
	r, _, err := n.apply(c, &Command{Op: OpTryAcquire, Target: id, Name: class, Span: maxHold})
	return ok(r).Lease, err
}

// Release gives a lease back, as engine.Engine.Release.
func (n *Node) Release(c *engine.Call, id engine.ID, rep engine.Report) (engine.Outcome, error) {
	r, _, err := n.apply(c, &Command{Op: OpRelease, Target: id, Report: rep})
	return ok(r).Outcome, err
}

// Abandon withdraws a waiter Acquire returned on this member, as
// engine.Engine.Abandon; a settled waiter (engine.Engine.Settled) is left
// alone. Unlike
// the engine's, it can fail (on a follower the waiter stays queued, and a
// grant it gets ends with its session or its hold).
func (n *Node) Abandon(c *engine.Call, w *engine.Waiter) error {
	index, found := n.fsm.waiterIndex(w)
	if !found {
		return nil
	}
	_, _, err := n.apply(c, &Command{Op: OpAbandon, Waiter: index})
	return err
}

// OpenSession opens a session with the token the leader chose, as
// engine.Engine.OpenSession.
func (n *Node) OpenSession(c *engine.Call, scope engine.ID, ttl time.Duration, token [32]byte) (engine.SessionInfo, error) {
	r, _, err := n.apply(c, &Command{Op: OpOpenSession, Target: scope, Span: ttl, Token: token})
	return ok(r).Session, err
}

// CloseSession ends the caller's session, as engine.Engine.CloseSession.
func (n *Node) CloseSession(c *engine.Call) error {
	_, _, err := n.apply(c, &Command{Op: OpCloseSession})
	return err
}

// Reap takes every decision time has made, as engine.Engine.Reap.
func (n *Node) Reap(c *engine.Call) (int, error) {
	r, _, err := n.apply(c, &Command{Op: OpReap})
	return ok(r).Reaped, err
}

// ok returns r, or an empty result for a command that was not applied.
func ok(r *Result) *Result {
	if r == nil {
		return &Result{}
	}
	return r
}
