package governor

import (
	"errors"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// watchLoop keeps one WatchNode stream open for every node the session
// created and everything beneath them, and ends the matching task when one
// ends. A broken stream is opened again; its first messages are the
// current states, so an end missed while it was down is heard then. It
// runs until the session ends.
func (s *session) watchLoop() {
	defer s.c.loops.Done()
	for attempt := 0; ; attempt++ {
		heard, err := s.watchOnce()
		if s.ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrSessionLost) {
			s.lose(err)
			return
		}
		if heard {
			attempt = 0
		}
		if pause(s.ctx, attempt) != nil {
			return
		}
		s.c.markUnwatched()
	}
}

// watchOnce follows one stream until it ends; heard says whether any
// message came.
func (s *session) watchOnce() (heard bool, err error) {
	stream, err := s.api.WatchNode(s.ctx, connect.NewRequest(&governorv1.WatchNodeRequest{CreatedBySession: true}))
	if err != nil {
		return false, fromAPI(s.ctx, "watch tasks", err)
	}
	defer stream.Close()
	for stream.Receive() {
		heard = true
		s.c.heard(stream.Msg())
	}
	return heard, fromAPI(s.ctx, "watch tasks", stream.Err())
}

// heard applies one change: a task that ended is ended here too.
func (c *Client) heard(m *governorv1.WatchNodeResponse) {
	active := m.State == governorv1.NodeState_NODE_STATE_ACTIVE
	c.mu.Lock()
	t := c.tasks[m.NodeId]
	switch {
	case t != nil:
		t.watched = true
	case !active && c.pending > 0:
		c.early[m.NodeId] = m.EndedReason
	}
	c.mu.Unlock()
	if t != nil && !active {
		t.end(taskEnded(t.name, t.id, m.EndedReason))
	}
}

// markUnwatched notes, before a stream is opened again, that no task is
// known to be followed by it yet.
func (c *Client) markUnwatched() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.tasks {
		t.watched = false
	}
}

// unwatched returns the tasks the current stream has not reported.
func (c *Client) unwatched() []*Task {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Task
	for _, t := range c.tasks {
		if !t.watched {
			out = append(out, t)
		}
	}
	return out
}
