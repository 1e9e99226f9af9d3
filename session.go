package governor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// failShare is the part of the TTL after which, without a successful
// heartbeat, the client gives its session up: before governord ends it.
const failShare = 0.8

// session is one session of a client with governord: its calls carry its
// token, and its context ends, with the cause, when it is lost or the
// client is closed.
type session struct {
	c      *Client
	api    governorv1connect.GovernorServiceClient // calls carry the session's token
	id     uint64
	ttl    time.Duration // the TTL governord granted
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// lose ends s because governord no longer holds it: every task of the
// client is cancelled with why, and a new session is opened in the
// background. It does nothing when s is not the live session.
func (s *session) lose(why error) {
	c := s.c
	c.mu.Lock()
	if c.cur != s || c.lost != nil {
		c.mu.Unlock()
		return
	}
	c.lost = why
	tasks := c.takeTasks()
	c.loops.Add(1)
	c.mu.Unlock()
	s.drop(tasks, why)
	go c.reopen()
}

// drop cancels s's context and every task of tasks with why.
func (s *session) drop(tasks map[uint64]*Task, why error) {
	s.cancel(why)
	for _, t := range tasks {
		t.cancel(why)
	}
}

// called maps the error of a call made for ctx in s and loses s when the
// answer says governord no longer holds it.
func (s *session) called(ctx context.Context, what string, err error) error {
	err = fromAPI(ctx, what, err)
	if errors.Is(err, ErrSessionLost) && ctx.Err() == nil {
		s.lose(err)
	}
	return err
}

// close ends s on governord, retrying a transient failure for up to one
// TTL.
func (s *session) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.ttl)
	defer cancel()
	for attempt := 0; ; attempt++ {
		_, err := s.api.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))
		err = fromAPI(ctx, "close session", err)
		if err == nil || !errors.Is(err, ErrUnavailable) || pause(ctx, attempt) != nil {
			return err
		}
	}
}

// sessionLoop heartbeats three times per TTL and gives the session up when
// no heartbeat has succeeded within 80% of the TTL, counted on the
// monotonic clock from when the last successful one was sent. lastSent is
// when OpenSession was sent. It runs until the session ends.
func (s *session) sessionLoop(lastSent time.Time) {
	defer s.c.loops.Done()
	failAfter := time.Duration(float64(s.ttl) * failShare)
	tick := time.NewTicker(s.ttl / 3)
	defer tick.Stop()
	giveUp := lastSent.Add(failAfter)
	watchdog := time.NewTimer(time.Until(giveUp))
	defer watchdog.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-watchdog.C:
			s.lose(fmt.Errorf("%w: no heartbeat succeeded within %s (80%% of the session's TTL of %s); every task of this session is cancelled",
				ErrSessionLost, failAfter, s.ttl))
			return
		case <-tick.C:
			sent := time.Now()
			err := s.heartbeat(giveUp)
			switch {
			case err == nil:
				giveUp = sent.Add(failAfter)
				watchdog.Reset(time.Until(giveUp))
				s.checkUnwatched(giveUp)
			case errors.Is(err, ErrSessionLost):
				s.lose(err)
				return
			}
		}
	}
}

// heartbeat renews the session, giving up at the instant the client would
// give the session up anyway.
func (s *session) heartbeat(giveUp time.Time) error {
	ctx, cancel := context.WithDeadline(s.ctx, giveUp)
	defer cancel()
	_, err := s.api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))
	return fromAPI(ctx, "heartbeat", err)
}

// checkUnwatched asks governord about the tasks the watch stream has not
// reported since it was last opened: after governord restarts, the stream
// no longer follows nodes created before the restart. It gives up by
// giveUp, so that the watchdog is never held up.
func (s *session) checkUnwatched(giveUp time.Time) {
	ctx, cancel := context.WithDeadline(s.ctx, giveUp)
	defer cancel()
	for _, t := range s.c.unwatched() {
		res, err := s.api.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: t.id}))
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

// pause sleeps the backoff before repeating a call governord did not
// answer, or the watch stream, after attempt failures in a row.
func pause(ctx context.Context, attempt int) error {
	return clientconn.Sleep(ctx, clientconn.Jitter(attempt, 20*time.Millisecond, time.Second))
}
