package governor

import (
	"context"
	"errors"
	"fmt"
)

// send makes one call that changes state in s, carrying request id id
// over every attempt. A call governord did not answer may or may not have
// been applied, so it is sent again, with the same id and after a backoff,
// until governord answers, ctx ends or s ends: governord applies an id at
// most once per session and answers a repeat with the first result. fail
// maps an answer (s.called, or a task's failed). Giving up without an
// answer is an *UnknownOutcomeError.
func (s *session) send(ctx context.Context, what, id string, fail func(context.Context, string, error) error, call func(context.Context) error) error {
	var unanswered error // the last attempt governord did not answer
	for attempt := 0; ; attempt++ {
		err := call(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return &UnknownOutcomeError{Call: what, RequestID: id, why: context.Cause(ctx), unanswered: unanswered}
		}
		err = fail(ctx, what, err)
		if !errors.Is(err, ErrUnavailable) {
			return err
		}
		unanswered = err
		why := pause(ctx, attempt)
		if why == nil && s.ctx.Err() != nil {
			why = context.Cause(s.ctx)
		}
		if why != nil {
			return &UnknownOutcomeError{Call: what, RequestID: id, why: why, unanswered: unanswered}
		}
	}
}

// UnknownOutcomeError is a call that changes state given up before
// governord answered it: its context ended, or the client's session did,
// while the call was unanswered or in flight. governord may or may not
// have applied it. Repeating it with the same arguments and the same
// request id (WithRequestID) while the session lasts applies it at most
// once and answers its result. It matches ErrOutcomeUnknown, the cause
// that ended the wait (the context's, ErrTaskEnded, ErrSessionLost or
// ErrClosed) and ErrUnavailable when an attempt went unanswered.
type UnknownOutcomeError struct {
	// Call names the call: "consume", "acquire db", "create task"...
	Call string
	// RequestID is the id every attempt carried.
	RequestID string

	why, unanswered error
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("governor: %s: given up without an answer from governord (%v); it may or may not have been applied: "+
		"repeat it with request id %q to apply it at most once and learn its result", e.Call, e.why, e.RequestID)
}

func (e *UnknownOutcomeError) Unwrap() []error {
	out := []error{ErrOutcomeUnknown, e.why}
	if e.unanswered != nil {
		out = append(out, e.unanswered)
	}
	return out
}
