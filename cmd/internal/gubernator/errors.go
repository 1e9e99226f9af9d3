package gubernator

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/eventlog"
)

// ErrOptions is returned by New for options it cannot serve with.
var ErrOptions = errors.New("gubernator: bad options")

// RequestError is a problem with one request of a GetRateLimits call. It is
// answered in that request's error field; the other requests go on.
type RequestError struct {
	// Message says what was wrong and what is allowed, starting with the field's name.
	Message string
}

func (e *RequestError) Error() string { return e.Message }

// Messages of the errors that fail a whole call.
const (
	msgRecordLost   = "governord lost its record; retry after it restarts."
	msgStopping     = "governord is shutting down; retry after it restarts."
	msgNoCredential = "Missing credential: send the header Authorization: Bearer with an API key."
	msgUnknownKey   = "The API key matches none that governord is configured with."
	msgTooMany      = "A GetRateLimits call carries at most 1000 requests; split the list."
)

// recordError is the answer when the record cannot be waited for: a commit
// failed, governord is stopping, or the caller gave up.
func recordError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, eventlog.ErrCommitFailed):
		return connect.NewError(connect.CodeUnavailable, errors.New(msgRecordLost))
	case errors.Is(err, eventlog.ErrStopped):
		return connect.NewError(connect.CodeUnavailable, errors.New(msgStopping))
	case errors.Is(ctx.Err(), context.Canceled):
		return connect.NewError(connect.CodeCanceled, ctx.Err())
	case ctx.Err() != nil:
		return connect.NewError(connect.CodeDeadlineExceeded, ctx.Err())
	}
	return connect.NewError(connect.CodeUnavailable, errors.New(msgRecordLost))
}
