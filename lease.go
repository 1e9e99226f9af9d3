package governor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Lease is one slot of a concurrency class held by the client's session.
// Release it exactly once; later calls return the first result.
type Lease struct {
	// ID is a fencing token: a later grant has a larger id. A downstream
	// that refuses ids smaller than the largest it has seen cannot be
	// reached by a holder whose lease ended.
	ID uint64
	// Class is the concurrency class.
	Class string
	// NodeID is the task the lease was acquired on.
	NodeID uint64
	// HoldUntil is when governord ends the lease if it is still held; zero
	// without a maximum hold.
	HoldUntil time.Time

	t    *Task
	once sync.Once
	err  error

	done    chan struct{} // closed when the lease ends, as far as the client knows
	endOnce sync.Once
	why     error // why it ended; written before done is closed

	mu        sync.Mutex  // guards the fields below, set once by follow
	hold      *time.Timer // fires at HoldUntil; nil without a maximum hold
	stopWatch func() bool // stops following the task's context
}

// Done is closed when the lease ends for any reason the client learns of:
// released, its maximum hold run out, revoked with its task (closed,
// cancelled, past its deadline), or its session lost. A holder selects on
// it instead of polling Validate; the fencing ID stays the stronger
// guarantee.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Err is nil while Done is open, and then says why the lease ended; it
// matches ErrLeaseLost.
func (l *Lease) Err() error {
	select {
	case <-l.done:
		return l.why
	default:
		return nil
	}
}

// follow starts watching for the lease's end: its maximum hold and its
// task's context, which ends when the task or its session does.
func (l *Lease) follow() {
	l.done = make(chan struct{})
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.HoldUntil.IsZero() {
		l.hold = time.AfterFunc(time.Until(l.HoldUntil), func() {
			l.ended(fmt.Errorf("%w: lease %d ran out its maximum hold", ErrLeaseLost, l.ID))
		})
	}
	tctx := l.t.ctx
	l.stopWatch = context.AfterFunc(tctx, func() {
		if cause := context.Cause(tctx); errors.Is(cause, ErrTaskEnded) || errors.Is(cause, ErrSessionLost) || errors.Is(cause, ErrClosed) {
			l.ended(fmt.Errorf("%w: lease %d ended with its task: %w", ErrLeaseLost, l.ID, cause))
		}
	})
}

// ended closes Done with why, once.
func (l *Lease) ended(why error) {
	l.endOnce.Do(func() {
		l.why = why
		close(l.done)
		l.mu.Lock()
		hold, stopWatch := l.hold, l.stopWatch
		l.mu.Unlock()
		if hold != nil {
			hold.Stop()
		}
		if stopWatch != nil {
			stopWatch()
		}
	})
}

// Report is how the downstream behaved under a lease, for governord's
// adaptive limits.
type Report struct {
	// Latency is how long the work under the lease took; zero: not measured.
	Latency time.Duration
	// Overloaded says the downstream signalled overload.
	Overloaded bool
}

// LeaseOption changes how a lease is acquired.
type LeaseOption func(*leaseOpts)

type leaseOpts struct {
	maxHold time.Duration
	noWait  bool
}

// WithMaxHold bounds how long the lease may be held: governord ends it
// then, whatever the holder does.
func WithMaxHold(d time.Duration) LeaseOption { return func(o *leaseOpts) { o.maxHold = d } }

// NoWait makes Acquire a try-acquire: it answers at once, with a lease if
// a slot is free now on the whole chain, and otherwise with an error
// matching ErrDenied, instead of waiting in the queue.
func NoWait() LeaseOption { return func(o *leaseOpts) { o.noWait = true } }

// Acquire waits in governord's fair queue for one slot of class on the
// task ctx carries and its whole chain (with NoWait, it does not wait).
// Its request id is kept over every attempt: an attempt governord did not
// answer is sent again and answered with the lease it granted, if it
// granted one. Cancelling ctx gives the wait up and returns ctx's cause; a
// grant that raced the cancellation is given back: governord gives back a
// grant its caller did not receive, and the client also asks again, in the
// background and without waiting, by the request id, and releases the
// lease it finds.
func Acquire(ctx context.Context, class string, opts ...LeaseOption) (*Lease, error) {
	t, err := current(ctx)
	if err != nil {
		return nil, err
	}
	var o leaseOpts
	for _, opt := range opts {
		opt(&o)
	}
	ask := &governorv1.TryAcquireRequest{NodeId: t.id, Class: class, RequestId: t.c.ids.of(ctx)}
	if o.maxHold != 0 {
		ask.MaxHold = durationpb.New(o.maxHold)
	}
	l, err := t.s.acquire(ctx, "acquire "+class, ask, o.noWait, t.failed)
	if err != nil {
		if ctx.Err() != nil {
			t.s.reclaim(ask)
			return nil, fmt.Errorf("governor: acquire %s: %w", class, context.Cause(ctx))
		}
		return nil, err
	}
	out := &Lease{ID: l.Id, Class: l.Class, NodeID: l.NodeId, t: t}
	if l.HoldUntil != nil {
		out.HoldUntil = l.HoldUntil.AsTime()
	}
	out.follow()
	return out, nil
}

// acquire sends ask, as an Acquire that waits or as a TryAcquire, until
// governord answers it, as send does, and returns the lease granted.
func (s *session) acquire(ctx context.Context, what string, ask *governorv1.TryAcquireRequest, noWait bool, fail func(context.Context, string, error) error) (*governorv1.Lease, error) {
	try := connect.NewRequest(ask)
	wait := connect.NewRequest(&governorv1.AcquireRequest{NodeId: ask.NodeId, Class: ask.Class, MaxHold: ask.MaxHold, RequestId: ask.RequestId})
	var l *governorv1.Lease
	err := s.send(ctx, what, ask.RequestId, fail, func(ctx context.Context) error {
		if noWait {
			res, err := s.api.TryAcquire(ctx, try)
			if err == nil {
				l = res.Msg.Lease
			}
			return err
		}
		res, err := s.api.Acquire(ctx, wait)
		if err == nil {
			l = res.Msg.Lease
		}
		return err
	})
	return l, err
}

// reclaim asks again, in the background, for an Acquire whose caller gave
// up: a TryAcquire with the same request id, which governord answers with
// the lease it remembers under the id (a grant that raced the
// cancellation) and otherwise grants only if a slot is free now; the
// lease found is released. It never waits in the queue.
func (s *session) reclaim(ask *governorv1.TryAcquireRequest) {
	s.c.background(s, func(ctx context.Context) {
		l, err := s.acquire(ctx, "give back an acquire whose caller went away", ask, true, s.called)
		if err != nil {
			return
		}
		_ = s.release(ctx, &governorv1.ReleaseRequest{LeaseId: l.Id, RequestId: s.c.ids.next()})
	})
}

// Release returns the lease with a report on the downstream. A transient
// failure is retried, with the same request id, for up to one session
// TTL, so the slot is not held until the lease expires. A lease that ended
// before (expired, or revoked with its task) is ErrLeaseLost.
func (l *Lease) Release(r Report) error {
	l.once.Do(func() {
		defer l.ended(fmt.Errorf("%w: lease %d was released", ErrLeaseLost, l.ID))
		s := l.t.s
		if s.ctx.Err() != nil {
			l.err = l.sessionEnded()
			return
		}
		req := &governorv1.ReleaseRequest{LeaseId: l.ID, Overloaded: r.Overloaded, RequestId: s.c.ids.next()}
		if r.Latency > 0 {
			req.Latency = durationpb.New(r.Latency)
		}
		l.err = s.release(context.Background(), req)
		if isNodeEnded(l.err) {
			l.err = &apiError{kind: ErrLeaseLost, msg: l.err.Error(), err: l.err}
		}
	})
	return l.err
}

// release sends req until governord answers it, for up to one TTL.
func (s *session) release(ctx context.Context, req *governorv1.ReleaseRequest) error {
	ctx, cancel := context.WithTimeout(ctx, s.ttl)
	defer cancel()
	return s.send(ctx, "release", req.RequestId, s.called, func(ctx context.Context) error {
		_, err := s.api.Release(ctx, connect.NewRequest(req))
		return err
	})
}

// Validate reports whether the lease is still held: nil if so, an
// ErrLeaseLost saying how it ended otherwise. The lease can end right
// after; the fencing ID is the stronger guarantee.
func (l *Lease) Validate(ctx context.Context) error {
	s := l.t.s
	if err := l.t.c.live(ctx); err != nil {
		return err
	}
	if s.ctx.Err() != nil {
		return l.sessionEnded()
	}
	res, err := s.api.Validate(ctx, connect.NewRequest(&governorv1.ValidateRequest{LeaseId: l.ID}))
	if err != nil {
		return s.called(ctx, "validate", err)
	}
	if !res.Msg.Valid {
		err := &apiError{kind: ErrLeaseLost, msg: res.Msg.Reason, err: errors.New(res.Msg.State.String())}
		l.ended(err)
		return err
	}
	return nil
}

// Do holds a lease of class around fn and reports fn's latency when it
// releases it; an error wrapping ErrOverloaded reports overload. fn's
// error comes first; a lease lost meanwhile is reported when fn succeeded.
func Do(ctx context.Context, class string, fn func(context.Context) error, opts ...LeaseOption) error {
	l, err := Acquire(ctx, class, opts...)
	if err != nil {
		return err
	}
	start := time.Now()
	err = fn(ctx)
	rerr := l.Release(Report{Latency: time.Since(start), Overloaded: errors.Is(err, ErrOverloaded)})
	if err != nil {
		return err
	}
	return rerr
}

// sessionEnded is the ErrLeaseLost of a lease whose session has ended.
func (l *Lease) sessionEnded() error {
	return fmt.Errorf("%w: lease %d ended with the session: %w", ErrLeaseLost, l.ID, context.Cause(l.t.s.ctx))
}
