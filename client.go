package governor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// Client holds a session with governord: it heartbeats the session,
// follows the state of its tasks on one watch stream and cancels their
// contexts when they end. When the session is lost, the tasks of that
// session end with ErrSessionLost and the client opens a new session by
// itself, with backoff, after which new tasks work again. Create it with
// Dial and end it with Close; its methods are safe for concurrent use.
type Client struct {
	conn  clientconn.Config // with the HTTP client every call goes through
	byKey governorv1connect.GovernorServiceClient
	open  *governorv1.OpenSessionRequest // what Dial and every reopening ask for
	ids   requestIDs
	own   *http.Client       // the HTTP client Dial built, closed by Close; nil for WithHTTPClient's
	bg    context.Context    // ends with Close; every session's context derives from it
	stop  context.CancelFunc // ends bg
	loops sync.WaitGroup     // the background goroutines; Add only under mu while lost is nil

	mu      sync.Mutex // guards the fields below
	cur     *session   // the newest session; lost while lost is ErrSessionLost
	tasks   map[uint64]*Task
	pending int               // NewTask calls between their CreateNode and their registration
	early   map[uint64]string // ends heard for nodes not registered yet, kept while pending > 0
	lost    error             // ErrSessionLost while a new session is being opened, ErrClosed after Close; nil while live

	closeOnce sync.Once
	closeErr  error
}

// Dial opens a session with governord and starts its heartbeats and its
// watch stream. It reads GOVERNOR_ADDR, GOVERNOR_API_KEY, GOVERNOR_TLS and
// GOVERNOR_CA_FILE; options override them. An unreachable governord is
// ErrUnavailable and an unknown key ErrBadKey.
func Dial(ctx context.Context, opts ...Option) (*Client, error) {
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	c := &Client{ids: newRequestIDs(), tasks: make(map[uint64]*Task), early: make(map[uint64]string),
		open: &governorv1.OpenSessionRequest{ClientName: s.name}}
	if s.ttl > 0 {
		c.open.Ttl = durationpb.New(s.ttl)
	}
	hc, err := s.conn.Client() // one HTTP client, so that every call shares where the leader is
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if s.conn.HTTPClient == nil {
		c.own = hc
	}
	s.conn.HTTPClient = hc
	c.conn = s.conn
	if c.byKey, err = c.conn.API(nil); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	c.bg, c.stop = context.WithCancel(context.Background())
	sess, sent, err := c.openSession(ctx)
	if err != nil {
		c.stop()
		if c.own != nil {
			c.own.CloseIdleConnections()
		}
		return nil, err
	}
	c.mu.Lock()
	c.start(sess, sent)
	c.mu.Unlock()
	return c, nil
}

// openSession opens a session with the API key; sent is when the request
// left.
func (c *Client) openSession(ctx context.Context) (s *session, sent time.Time, err error) {
	sent = time.Now()
	res, err := c.byKey.OpenSession(ctx, connect.NewRequest(c.open))
	if err != nil {
		err = fromAPI(ctx, "open session", err)
		if errors.Is(err, ErrSessionLost) {
			err = &apiError{kind: ErrBadKey, msg: err.Error(), err: err}
		}
		return nil, sent, err
	}
	m := res.Msg
	s = &session{c: c, id: m.SessionId, ttl: m.Ttl.AsDuration()}
	token := m.Token
	if s.api, err = c.conn.API(func() string { return token }); err != nil {
		return nil, sent, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return s, sent, nil
}

// start makes s the client's session and starts its loops. c.mu is held
// and the client is not over.
func (c *Client) start(s *session, sent time.Time) {
	s.ctx, s.cancel = context.WithCancelCause(c.bg)
	c.cur, c.lost = s, nil
	c.loops.Add(2)
	go s.sessionLoop(sent)
	go s.watchLoop()
}

// current returns the live session, or why there is none.
func (c *Client) current() (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil {
		return nil, c.lost
	}
	return c.cur, nil
}

// SessionID is the id of the client's newest session.
func (c *Client) SessionID() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur.id
}

// TTL is the TTL governord granted the client's newest session.
func (c *Client) TTL() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur.ttl
}

// Err is nil while the client has a live session, and otherwise says why
// not: ErrSessionLost while it opens a new one, ErrClosed after Close.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// Close ends every task context of the client, stops its goroutines and
// closes the session, which releases its leases. It does not end the tasks
// on governord: close them first (defer task.Close() after Dial does). Calls after Close fail
// with ErrClosed. Close is idempotent and returns the first call's result.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		s, before := c.end(ErrClosed)
		c.loops.Wait()
		if c.own != nil {
			defer c.own.CloseIdleConnections()
		}
		if before != nil {
			return
		}
		c.closeErr = s.close()
	})
	return c.closeErr
}

// end marks the client over with why, cancels every task context and the
// session's with it and stops the loops; it returns the newest session and
// why the client had no live session before, if it had none.
func (c *Client) end(why error) (*session, error) {
	c.mu.Lock()
	before, s := c.lost, c.cur
	c.lost = why
	tasks := c.takeTasks()
	c.mu.Unlock()
	s.drop(tasks, why)
	c.stop()
	return s, before
}

// takeTasks empties the client's tasks and returns them. c.mu is held.
func (c *Client) takeTasks() map[uint64]*Task {
	tasks := c.tasks
	c.tasks = make(map[uint64]*Task)
	return tasks
}

// reopen opens a new session after one was lost, with capped full-jitter
// backoff, until one opens or the client is closed. It runs on its own
// goroutine, counted in loops.
func (c *Client) reopen() {
	defer c.loops.Done()
	for attempt := 0; ; attempt++ {
		if clientconn.Sleep(c.bg, clientconn.Jitter(attempt, 50*time.Millisecond, 5*time.Second)) != nil {
			return
		}
		s, sent, err := c.openSession(c.bg)
		if err != nil {
			continue
		}
		c.mu.Lock()
		closed := c.lost != nil && !errors.Is(c.lost, ErrSessionLost)
		if !closed {
			c.start(s, sent)
		}
		c.mu.Unlock()
		if closed {
			_ = s.close()
		}
		return
	}
}

// background runs f on a goroutine of its own, with s's context, while s
// is the live session; Close waits for it.
func (c *Client) background(s *session, f func(ctx context.Context)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil || c.cur != s {
		return
	}
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		f(s.ctx)
	}()
}

// live refuses new work once the client has no live session or ctx is
// done.
func (c *Client) live(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	return c.Err()
}

// liveSession is the live session for new work made for ctx, or, as live
// says, why there is none.
func (c *Client) liveSession(ctx context.Context) (*session, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	return c.current()
}
