package linz

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// client is one of a run's clients. It holds at most one lease at a time.
type client struct {
	run           *Run
	id            int
	reader        bool // makes only reads
	rng           *rand.Rand
	quota, leases *Recorder
	seq           int    // requests made, for request ids
	lease         string // the lease held, if any
}

// loop makes calls until ctx ends.
func (c *client) loop(ctx context.Context) {
	for ctx.Err() == nil {
		if c.reader {
			c.read(ctx)
			c.pause(ctx)
			continue
		}
		switch c.rng.IntN(4) {
		case 0, 1:
			c.consume(ctx)
		case 2:
			c.read(ctx)
		default:
			c.useLease(ctx)
		}
	}
}

// pause waits the run's pause, or until ctx ends.
func (c *client) pause(ctx context.Context) {
	t := time.NewTimer(c.run.Pause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// requestID names a new request of this client.
func (c *client) requestID() string {
	c.seq++
	return fmt.Sprintf("c%d-%d", c.id, c.seq)
}

func (c *client) key() string { return fmt.Sprintf("k%d", c.rng.IntN(c.run.Keys)) }

// bounded runs f under the run's per-call timeout.
func (c *client) bounded(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.run.Timeout)
	defer cancel()
	return f(ctx)
}

// consume charges a random key. While an attempt's outcome is unknown or
// surely had no effect, it tries again with the same request id, until the
// run ends or Retries attempts had unknown outcomes. The attempts are one
// call in the history, from the first attempt's call to the answer: the
// target applies the request once, somewhere in that span.
func (c *client) consume(ctx context.Context) {
	op := QuotaOp{Kind: Consume, Key: c.key(), N: 1 + c.rng.Int64N(3), RequestID: c.requestID()}
	call := c.quota.Call(c.id, op)
	unknowns := 0
	for unknowns <= c.run.Retries && ctx.Err() == nil {
		var ok bool
		err := c.bounded(ctx, func(ctx context.Context) (err error) {
			ok, err = c.run.Target.Consume(ctx, op.Key, op.N, op.RequestID)
			return err
		})
		switch {
		case err == nil:
			call.Return(QuotaResult{OK: ok})
			return
		case !isNotApplied(err):
			unknowns++
		}
	}
	if unknowns == 0 {
		call.Forget()
	}
}

// read reads a random key.
func (c *client) read(ctx context.Context) {
	op := QuotaOp{Kind: Read, Key: c.key()}
	var n int64
	call := c.quota.Call(c.id, op)
	err := c.bounded(ctx, func(ctx context.Context) (err error) {
		n, err = c.run.Target.Read(ctx, op.Key)
		return err
	})
	outcome(call, err, func() any { return QuotaResult{Usage: n} })
}

// useLease acquires a lease when the client holds none, and otherwise
// validates or releases the one it holds. A lease whose release has an
// unknown outcome is let go.
func (c *client) useLease(ctx context.Context) {
	if c.lease == "" {
		var id string
		var granted bool
		call := c.leases.Call(c.id, LeaseOp{Kind: Acquire})
		err := c.bounded(ctx, func(ctx context.Context) (err error) {
			id, granted, err = c.run.Target.Acquire(ctx, c.requestID())
			return err
		})
		if outcome(call, err, func() any { return LeaseResult{OK: granted, ID: id} }) && granted {
			c.lease = id
		}
		return
	}
	op, f := LeaseOp{Kind: Validate, ID: c.lease}, c.run.Target.Validate
	if c.rng.IntN(2) == 0 {
		op, f = LeaseOp{Kind: Release, ID: c.lease}, c.run.Target.Release
	}
	var held bool
	call := c.leases.Call(c.id, op)
	err := c.bounded(ctx, func(ctx context.Context) (err error) {
		held, err = f(ctx, op.ID)
		return err
	})
	returned := outcome(call, err, func() any { return LeaseResult{OK: held} })
	if op.Kind == Release && (returned || err != nil && !isNotApplied(err)) {
		c.lease = ""
	}
}
