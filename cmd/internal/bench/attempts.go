package bench

import (
	"context"
	"errors"
	"net"
	"sync/atomic"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
)

// Attempts counts the failed attempts of a client's calls by what they
// came to.
type Attempts struct {
	// Redirected: a member that does not lead named the leader, and the
	// client sent the call there.
	Redirected int64 `json:"redirected"`
	// NotApplied: a member refused the call before its log and named no
	// leader; the client sent it to the next member.
	NotApplied int64 `json:"not_applied"`
	// Unknown: the call was sent and no definite answer came (the member
	// died with it, or its leader lost track of it); it may have been
	// applied, and is sent again only with its request id.
	Unknown int64 `json:"unknown_outcome"`
}

// attempts is a connect interceptor inside the client's leader following,
// so that it sees every attempt of a call; it counts from the moment from
// is called.
type attempts struct {
	on                              atomic.Bool
	redirected, notApplied, unknown atomic.Int64
}

var _ connect.Interceptor = (*attempts)(nil)

func (a *attempts) from() { a.on.Store(true) }

func (a *attempts) counts() Attempts {
	return Attempts{Redirected: a.redirected.Load(), NotApplied: a.notApplied.Load(), Unknown: a.unknown.Load()}
}

func (a *attempts) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		if err != nil && a.on.Load() {
			a.count(err)
		}
		return res, err
	}
}

func (a *attempts) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (a *attempts) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// count sorts one failed attempt.
func (a *attempts) count(err error) {
	var ce *connect.Error
	var op *net.OpError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
	case errors.As(err, &op) && op.Op == "dial":
	case !errors.As(err, &ce) || ce.Code() != connect.CodeUnavailable:
		if ce == nil || !connect.IsWireError(ce) {
			a.unknown.Add(1)
		}
	case ce.Meta().Get(clientconn.LeaderHeader) != "":
		a.redirected.Add(1)
	case ce.Meta().Get(clientconn.NotAppliedHeader) == "true":
		a.notApplied.Add(1)
	default:
		a.unknown.Add(1)
	}
}
