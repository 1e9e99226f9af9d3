package governor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Sentinels for errors.Is. A call that governord refuses, or that does not
// reach it, fails with an error matching exactly one of the first nine. A
// call cut short by its context fails with the context's cause, which is
// ErrTaskEnded, ErrSessionLost or ErrClosed when the task or the client
// ended; a call that changes state and was cut short before governord
// answered it also matches ErrOutcomeUnknown.
var (
	// ErrDenied: a quota on the task's chain is spent. The error is a
	// *DeniedError naming the cap that was hit.
	ErrDenied = errors.New("governor: denied")
	// ErrTaskEnded: the task was closed, cancelled, or passed its deadline.
	ErrTaskEnded = errors.New("governor: task ended")
	// ErrSessionLost: the client's session ended, or no heartbeat succeeded
	// within 80% of its TTL; every task of that session is over, and the
	// client is opening a new session.
	ErrSessionLost = errors.New("governor: session lost")
	// ErrLeaseLost: the lease expired, was revoked with its node, or is not
	// the caller's.
	ErrLeaseLost = errors.New("governor: lease lost")
	// ErrForbidden: the call may not end or re-cap the key's own scope node.
	ErrForbidden = errors.New("governor: forbidden")
	// ErrNotFound: the node does not exist (any more), or lies outside the
	// key's scope: governord answers the two alike.
	ErrNotFound = errors.New("governor: not found")
	// ErrInvalid: an argument was refused; the message names the field and
	// what it allows.
	ErrInvalid = errors.New("governor: invalid argument")
	// ErrBadKey: governord does not know the API key.
	ErrBadKey = errors.New("governor: bad API key")
	// ErrUnavailable: governord could not be reached or could not answer.
	// A read reports it at once (with several addresses, once none
	// answered: see WithAddr). A call that changes state is sent again
	// with the same request id until governord answers, and reports it
	// only with ErrOutcomeUnknown, when its context or session ended first.
	ErrUnavailable = errors.New("governor: unavailable")
	// ErrOutcomeUnknown: a call that changes state was given up before
	// governord answered it, so it may or may not have been applied. The
	// error is an *UnknownOutcomeError carrying the request id to repeat.
	ErrOutcomeUnknown = errors.New("governor: outcome unknown")

	// ErrNoTask: the context carries no task; create one with
	// Client.NewTask.
	ErrNoTask = errors.New("governor: the context carries no task; create one with Client.NewTask")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("governor: client closed")
	// ErrRetryBudget marks the last error of a Retry whose "retry" budget
	// is spent, so that enclosing Retry loops return it at once.
	ErrRetryBudget = errors.New("governor: retry budget spent")
	// ErrOverloaded, wrapped in the error Do's function returns, reports the
	// downstream as overloaded when the lease is released.
	ErrOverloaded = errors.New("governor: downstream overloaded")
	// ErrNeverFits, with ErrDenied: no wait makes room for a Wait. It asks
	// for more than a rate cap's burst (or a token bucket's limit), or a
	// quota, which never refills, is spent.
	ErrNeverFits = errors.New("governor: never fits")
)

// DeniedError is a refused Consume or Wait: the cap that was hit and who
// spent it, or, for a rate cap, when it would have room.
type DeniedError struct {
	// NodeID and NodeName name the node whose cap was hit: the task itself
	// or an ancestor.
	NodeID   uint64
	NodeName string
	// Resource is the resource refused.
	Resource string
	// Used and Limit are the node's usage and cap; Requested is what the
	// refused call asked for.
	Used, Limit, Requested int64
	// Largest is the child of the node that used the most; nil when none
	// has used any.
	Largest *Consumer
	// Rate says a rate cap refused: Limit is its limit per period and
	// Used is not reported. False: a quota refused.
	Rate bool
	// Remaining is what the rate cap that refused admits now.
	Remaining int64
	// RetryAfter is the wait that would have been needed, measured from
	// the refusal; zero when no wait helps.
	RetryAfter time.Duration
	// Reset is when the rate cap that refused would admit the amount (or,
	// when it never can, is full again); zero for a quota.
	Reset time.Time
	// NeverFits says no wait helps; set only on a refused Wait, which then
	// matches ErrNeverFits too.
	NeverFits bool
	// Shared says the cap that refused lies above the key's scope, a budget
	// shared with others: governord tells only Resource, Requested,
	// RetryAfter, Reset and NeverFits, never that cap's node, figures or
	// consumers.
	Shared  bool
	msg     string
	explain func(context.Context) (*Explanation, error) // set for a call made on a task
}

// Consumer is a node and what it used of a resource.
type Consumer struct {
	NodeID uint64
	Name   string
	Used   int64
}

func (e *DeniedError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return fmt.Sprintf("the %s budget of %q is spent (%d of %d used, %d more asked)", e.Resource, e.NodeName, e.Used, e.Limit, e.Requested)
}

// Is makes errors.Is(err, ErrDenied) true, and errors.Is(err,
// ErrNeverFits) true when no wait helps.
func (e *DeniedError) Is(target error) bool {
	return target == ErrDenied || target == ErrNeverFits && e.NeverFits
}

// apiError is a refused call: its kind (one of the sentinels) and the
// server's words.
type apiError struct {
	kind error
	msg  string
	err  error
}

func (e *apiError) Error() string   { return e.msg }
func (e *apiError) Unwrap() []error { return []error{e.kind, e.err} }

// codeKinds maps the status codes that need no detail to their sentinel.
var codeKinds = map[connect.Code]error{
	connect.CodeNotFound:           ErrNotFound,
	connect.CodePermissionDenied:   ErrForbidden,
	connect.CodeInvalidArgument:    ErrInvalid,
	connect.CodeUnauthenticated:    ErrSessionLost,
	connect.CodeFailedPrecondition: ErrTaskEnded,
	connect.CodeResourceExhausted:  ErrDenied,
}

// fromAPI turns an error of a call to governord into the SDK's. A call
// cut short by its context answers with the context's cause, so that a
// task that ended says so.
func fromAPI(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("governor: %s: %w", what, context.Cause(ctx))
	}
	ce := new(connect.Error)
	if !errors.As(err, &ce) {
		return unavailable(what, err.Error(), err)
	}
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		switch m := v.(type) {
		case *governorv1.Denial:
			return denied(m, ce.Message())
		case *governorv1.LeaseEnded:
			return &apiError{kind: ErrLeaseLost, msg: ce.Message(), err: ce}
		}
	}
	kind, ok := codeKinds[ce.Code()]
	if !ok {
		return unavailable(what, ce.Message(), ce)
	}
	return &apiError{kind: kind, msg: ce.Message(), err: ce}
}

// unavailable says that governord did not answer.
func unavailable(what, why string, err error) error {
	return &apiError{kind: ErrUnavailable, err: err,
		msg: "governor: " + what + ": governord did not answer (" + why + ")"}
}

func denied(d *governorv1.Denial, msg string) *DeniedError {
	e := &DeniedError{
		NodeID: d.NodeId, NodeName: d.NodeName, Resource: d.Resource,
		Used: d.Used, Limit: d.Limit, Requested: d.Requested, msg: msg,
		Rate: d.Rate != nil, Remaining: d.Remaining, NeverFits: d.NeverFits, Shared: d.Shared,
	}
	if d.RetryAfter != nil {
		e.RetryAfter = d.RetryAfter.AsDuration()
	}
	if d.ResetTime != nil {
		e.Reset = d.ResetTime.AsTime()
	}
	if c := d.LargestConsumer; c != nil {
		e.Largest = &Consumer{NodeID: c.NodeId, Name: c.Name, Used: c.Used}
	}
	return e
}

// budgetError is the last error of a Retry that may not retry again, and
// why: the retry budget's denial, or the failure to charge it.
type budgetError struct {
	last, why error
}

func (e *budgetError) Error() string {
	return e.last.Error() + " (not retried: " + e.why.Error() + ")"
}

func (e *budgetError) Unwrap() []error { return []error{ErrRetryBudget, e.last, e.why} }

// taskEnded is the cause of a task context cancelled because the task
// ended.
func taskEnded(name string, id uint64, reason string) error {
	return fmt.Errorf("%w: task %q (node %d) ended: %s", ErrTaskEnded, name, id, reason)
}
