package governor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// failShare is the part of the TTL after which, without a successful
// heartbeat, the client gives its session up: before governord ends it.
const failShare = 0.8

// sessionLoop heartbeats three times per TTL and gives the session up when
// no heartbeat has succeeded within 80% of the TTL, counted on the
// monotonic clock from when the last successful one was sent. lastSent is
// when OpenSession was sent. It runs from Dial until the client ends.
func (c *Client) sessionLoop(ctx context.Context, lastSent time.Time) {
	defer c.loops.Done()
	failAfter := time.Duration(float64(c.ttl) * failShare)
	tick := time.NewTicker(c.ttl / 3)
	defer tick.Stop()
	giveUp := lastSent.Add(failAfter)
	watchdog := time.NewTimer(time.Until(giveUp))
	defer watchdog.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-watchdog.C:
			c.lose(fmt.Errorf("%w: no heartbeat succeeded within %s (80%% of the session's TTL of %s); every task of this client is cancelled",
				ErrSessionLost, failAfter, c.ttl))
			return
		case <-tick.C:
			sent := time.Now()
			err := c.heartbeat(ctx, giveUp)
			switch {
			case err == nil:
				giveUp = sent.Add(failAfter)
				watchdog.Reset(time.Until(giveUp))
				c.checkUnwatched(ctx, giveUp)
			case errors.Is(err, ErrSessionLost):
				c.lose(err)
				return
			}
		}
	}
}

// heartbeat renews the session, giving up at the instant the client would
// give the session up anyway.
func (c *Client) heartbeat(ctx context.Context, giveUp time.Time) error {
	ctx, cancel := context.WithDeadline(ctx, giveUp)
	defer cancel()
	_, err := c.api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))
	return fromAPI(ctx, "heartbeat", err)
}

// checkUnwatched asks governord about the tasks the watch stream has not
// reported since it was last opened: after governord restarts, the stream
// no longer follows nodes created before the restart. It gives up by
// giveUp, so that the watchdog is never held up.
func (c *Client) checkUnwatched(ctx context.Context, giveUp time.Time) {
	ctx, cancel := context.WithDeadline(ctx, giveUp)
	defer cancel()
	for _, t := range c.unwatched() {
		res, err := c.api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: t.id}))
		if err != nil {
			if err := fromAPI(ctx, "describe task", err); errors.Is(err, ErrNotFound) {
				t.end(fmt.Errorf("%w: task %q (node %d) is no longer known to governord", ErrTaskEnded, t.name, t.id))
			}
			continue
		}
		if n := res.Msg.Node; n.State != governorv1.NodeState_NODE_STATE_ACTIVE {
			t.end(taskEnded(t.name, t.id, n.EndedReason))
		}
	}
}

// jitter is a full-jitter backoff: a random wait up to base·2^attempt,
// capped at most. Any base and most a caller gives are safe: base·2^attempt
// is compared with most without being computed when it would not fit.
func jitter(attempt int, base, most time.Duration) time.Duration {
	ceil := most
	if attempt >= 0 && base > 0 && base <= most>>attempt {
		ceil = base << attempt
	}
	if ceil <= 0 {
		return 0
	}
	return rand.N(min(ceil, math.MaxInt64-1) + 1)
}

// pause sleeps the backoff before repeating a call governord did not
// answer, or the watch stream, after attempt failures in a row.
func pause(ctx context.Context, attempt int) error {
	return sleep(ctx, jitter(attempt, 20*time.Millisecond, time.Second))
}

// sleep waits d or until ctx ends, and says which with ctx's cause.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
