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

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// Client is a session with governord: it heartbeats the session, follows
// the state of its tasks on one watch stream and cancels their contexts
// when they end. Create it with Dial and end it with Close; its methods are
// safe for concurrent use.
type Client struct {
	api     governorv1connect.GovernorServiceClient
	key     string
	token   string // the session token; set by Dial before any other call
	session uint64
	ttl     time.Duration // the TTL governord granted
	ids     requestIDs
	own     *http.Client       // the HTTP client Dial built, closed by Close; nil for WithHTTPClient's
	bg      context.Context    // the context of the background goroutines; ends with the client
	stop    context.CancelFunc // ends bg: stops the session and watch loops
	loops   sync.WaitGroup     // the background goroutines; Add only under mu while lost is nil

	mu      sync.Mutex // guards the fields below
	tasks   map[uint64]*Task
	pending int               // NewTask calls between their CreateNode and their registration
	early   map[uint64]string // ends heard for nodes not registered yet, kept while pending > 0
	lost    error             // why the client is over: ErrSessionLost or ErrClosed; nil while live

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
	c := &Client{key: s.conn.APIKey, ids: newRequestIDs(), tasks: make(map[uint64]*Task), early: make(map[uint64]string)}
	if s.conn.HTTPClient == nil {
		if c.own, err = s.conn.Client(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		s.conn.HTTPClient = c.own
	}
	if c.api, err = s.conn.API(c.credential); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	req := &governorv1.OpenSessionRequest{ClientName: s.name}
	if s.ttl > 0 {
		req.Ttl = durationpb.New(s.ttl)
	}
	sent := time.Now()
	res, err := c.api.OpenSession(ctx, connect.NewRequest(req))
	if err != nil {
		if c.own != nil {
			c.own.CloseIdleConnections()
		}
		err = fromAPI(ctx, "open session", err)
		if errors.Is(err, ErrSessionLost) {
			err = &apiError{kind: ErrBadKey, msg: err.Error(), err: err}
		}
		return nil, err
	}
	m := res.Msg
	c.token, c.session, c.ttl = m.Token, m.SessionId, m.Ttl.AsDuration()
	c.bg, c.stop = context.WithCancel(context.Background())
	c.loops.Add(2)
	go c.sessionLoop(c.bg, sent)
	go c.watchLoop(c.bg)
	return c, nil
}

// credential is the bearer of every call: the API key until the session
// is open, its token afterwards.
func (c *Client) credential() string {
	if c.token != "" {
		return c.token
	}
	return c.key
}

// SessionID is the id of the client's session.
func (c *Client) SessionID() uint64 { return c.session }

// TTL is the session TTL governord granted.
func (c *Client) TTL() time.Duration { return c.ttl }

// Err is nil while the client is live, and afterwards says why it is not:
// ErrSessionLost or ErrClosed.
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
		lost := c.end(ErrClosed)
		c.loops.Wait()
		if c.own != nil {
			defer c.own.CloseIdleConnections()
		}
		if lost != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.ttl)
		defer cancel()
		c.closeErr = c.retryTransient(ctx, "close session", func(ctx context.Context) error {
			_, err := c.api.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))
			return err
		})
	})
	return c.closeErr
}

// background runs f on a goroutine of its own, with a context that ends
// with the client; Close waits for it. Once the client is over it does
// nothing.
func (c *Client) background(f func(ctx context.Context)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil {
		return
	}
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		f(c.bg)
	}()
}

// lose ends the client because its session is lost.
func (c *Client) lose(err error) { c.end(err) }

// end marks the client over with why, cancels every task context with it
// and stops the loops; it returns why the client had ended before, if it
// had.
func (c *Client) end(why error) error {
	c.mu.Lock()
	before := c.lost
	if before == nil {
		c.lost = why
	}
	tasks := c.tasks
	c.tasks = make(map[uint64]*Task)
	c.mu.Unlock()
	for _, t := range tasks {
		t.cancel(why)
	}
	c.stop()
	return before
}

// called maps the error of a call made for ctx and ends the client when
// it says the session is gone.
func (c *Client) called(ctx context.Context, what string, err error) error {
	err = fromAPI(ctx, what, err)
	if errors.Is(err, ErrSessionLost) && ctx.Err() == nil {
		c.lose(err)
	}
	return err
}

// retryTransient runs call until it succeeds, fails for a reason other
// than ErrUnavailable, or ctx ends, with capped full-jitter backoff.
func (c *Client) retryTransient(ctx context.Context, what string, call func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		err := fromAPI(ctx, what, call(ctx))
		if err == nil || !errors.Is(err, ErrUnavailable) {
			return err
		}
		if pause(ctx, attempt) != nil {
			return err
		}
	}
}
