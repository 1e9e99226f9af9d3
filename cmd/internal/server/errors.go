package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// ErrOptions is returned by New for options it cannot serve with.
var ErrOptions = errors.New("server: bad options")

// Messages of the errors that carry no detail.
const (
	msgRecordLost = "governord lost its record; retry after it restarts."
	msgStopping   = "governord is shutting down; retry after it restarts."
	msgNotFound   = "No such node in your scope: it was never created, it lies outside your scope, or it ended and was removed after the retention period."
	msgForbidden  = "Permission denied: the node is your scope node, which you may not end or re-cap."
	msgSession    = "Session ended; open a new one with OpenSession."
	msgNodeEnded  = "The node has ended (closed, cancelled or past its deadline): nothing can be created under, charged to or acquired on it."
	msgWithdrawn  = "The queued acquire with this request id was withdrawn by an earlier call with the same id that gave up; nothing is held. Send the acquire again."
	msgMismatch   = "The request id was used before with different arguments; use a new request id for a different call."
	msgTooShort   = "The deadline is shorter than governord recently took to record a grant, so nothing was acquired; the pool need not be full. Allow more time."
)

// toConnect turns an engine error into the status code and detail a client
// sees. Errors that are already Connect errors pass through.
func toConnect(err error) error {
	var ce *connect.Error
	var inv *engine.InvalidError
	var denied *engine.DeniedError
	var lease *engine.LeaseError
	var bound *engine.BoundError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce
	}
	if ce := clusterError(err); ce != nil {
		return ce
	}
	switch {
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, err)
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	case errors.As(err, &inv):
		return badField(engineField(inv.Field), inv.Problem)
	case errors.As(err, &denied):
		return withDetail(connect.CodeResourceExhausted, sentence(denied.Error()), denial(denied))
	case errors.As(err, &lease):
		return leaseError(lease)
	case errors.As(err, &bound):
		return connect.NewError(connect.CodeResourceExhausted, errors.New(sentence(bound.Error())))
	case errors.Is(err, engine.ErrRequestMismatch):
		return withDetail(connect.CodeInvalidArgument, msgMismatch,
			&governorv1.BadField{Field: "request_id", Allowed: "a new id for a call with different arguments"})
	case errors.Is(err, engine.ErrNotFound):
		return connect.NewError(connect.CodeNotFound, errors.New(msgNotFound))
	case errors.Is(err, engine.ErrForbidden):
		return connect.NewError(connect.CodePermissionDenied, errors.New(msgForbidden))
	case errors.Is(err, engine.ErrSessionEnded):
		return connect.NewError(connect.CodeUnauthenticated, errors.New(msgSession))
	case errors.Is(err, engine.ErrNodeEnded):
		return connect.NewError(connect.CodeFailedPrecondition, errors.New(msgNodeEnded))
	case errors.Is(err, engine.ErrWithdrawn):
		return connect.NewError(connect.CodeAborted, errors.New(msgWithdrawn))
	}
	return connect.NewError(connect.CodeInternal, fmt.Errorf("internal error: %w", err))
}

// recordError is the answer when the record cannot be waited for: a
// commit failed, governord is stopping, or the caller gave up. A failed
// commit may wrap a context error of its own, so it is looked at first.
func recordError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, eventlog.ErrCommitFailed):
		return unavailable(msgRecordLost)
	case errors.Is(err, eventlog.ErrStopped):
		return unavailable(msgStopping)
	case ctx.Err() != nil:
		return toConnect(ctx.Err())
	}
	return unavailable(msgRecordLost)
}

// badField is InvalidArgument naming the field and what it allows.
func badField(field, allowed string) error {
	return withDetail(connect.CodeInvalidArgument, sentence("field "+field+" "+allowed),
		&governorv1.BadField{Field: field, Allowed: allowed})
}

// engineFields names, in request terms, the fields the engine reports by
// its own names.
var engineFields = map[string]string{"parent": "parent_id"}

func engineField(f string) string {
	if name, ok := engineFields[f]; ok {
		return name
	}
	return f
}

func withDetail(code connect.Code, msg string, detail proto.Message) error {
	ce := connect.NewError(code, errors.New(msg))
	if d, err := connect.NewErrorDetail(detail); err == nil {
		ce.AddDetail(d)
	}
	return ce
}

func denial(d *engine.DeniedError) *governorv1.Denial {
	out := &governorv1.Denial{
		NodeId: uint64(d.Node), NodeName: d.NodeName, Resource: d.Resource,
		Used: d.Used, Limit: d.Limit, Requested: d.Requested,
	}
	if d.Largest.Node != 0 {
		out.LargestConsumer = &governorv1.Consumer{NodeId: uint64(d.Largest.Node), Name: d.Largest.Name, Used: d.Largest.Used}
	}
	if d.Rate != nil {
		out.Rate, out.Remaining, out.ResetTime = wireRate(*d.Rate), d.Remaining, stamp(d.Reset)
	} else if d.Shared && d.Reset != 0 {
		out.ResetTime = stamp(d.Reset)
	}
	if d.RetryAfter > 0 {
		out.RetryAfter = durationpb.New(d.RetryAfter)
	}
	out.NeverFits, out.Shared = d.NeverFits, d.Shared
	return out
}

// leaseOutcomes maps how a lease ended to its wire form and the words that
// explain it.
var leaseOutcomes = map[engine.Outcome]struct {
	wire  governorv1.LeaseEndedOutcome
	state governorv1.LeaseState
	why   string
}{
	engine.OutcomeExpired:  {governorv1.LeaseEndedOutcome_LEASE_ENDED_OUTCOME_EXPIRED, governorv1.LeaseState_LEASE_STATE_EXPIRED, "has expired: its max hold or its session's TTL ran out"},
	engine.OutcomeRevoked:  {governorv1.LeaseEndedOutcome_LEASE_ENDED_OUTCOME_REVOKED, governorv1.LeaseState_LEASE_STATE_REVOKED, "was revoked: its node ended"},
	engine.OutcomeNotOwner: {governorv1.LeaseEndedOutcome_LEASE_ENDED_OUTCOME_NOT_OWNER, governorv1.LeaseState_LEASE_STATE_HELD, "is held by another session"},
	engine.OutcomeUnknown:  {governorv1.LeaseEndedOutcome_LEASE_ENDED_OUTCOME_UNKNOWN, governorv1.LeaseState_LEASE_STATE_UNKNOWN, "is unknown: it was never issued to your scope, or it ended too long ago to be remembered"},
	engine.OutcomeReleased: {governorv1.LeaseEndedOutcome_LEASE_ENDED_OUTCOME_RELEASED, governorv1.LeaseState_LEASE_STATE_RELEASED, "was released by its holder"},
}

// leaseError is FailedPrecondition (PermissionDenied for another session's
// lease) with a LeaseEnded detail.
func leaseError(e *engine.LeaseError) error {
	o, ok := leaseOutcomes[e.Outcome]
	if !ok {
		return connect.NewError(connect.CodeInternal, fmt.Errorf("internal error: %w", e))
	}
	code := connect.CodeFailedPrecondition
	if e.Outcome == engine.OutcomeNotOwner {
		code = connect.CodePermissionDenied
	}
	return withDetail(code, fmt.Sprintf("Lease %d %s.", e.Lease, o.why),
		&governorv1.LeaseEnded{LeaseId: uint64(e.Lease), Outcome: o.wire})
}

// sentence starts msg with a capital letter and ends it with a full stop.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// unauthenticated is the answer to a missing or wrong credential.
func unauthenticated(msg string) error {
	return connect.NewError(connect.CodeUnauthenticated, errors.New(msg))
}

// unavailable is the answer when governord cannot serve the call now.
func unavailable(msg string) error {
	return connect.NewError(connect.CodeUnavailable, errors.New(msg))
}

// NotLeader is the answer of a node of a cluster that is not its leader,
// to any call: Unavailable, naming the leader's API address, host:port,
// in the message and in the Governor-Leader response metadata
// (clientconn.LeaderHeader), which a client follows. With no leader known
// (leader is ""), the metadata is absent and the message says to retry.
// Nothing was applied, which the Governor-Not-Applied metadata
// (clientconn.NotAppliedHeader) says too: the call may be sent again
// anywhere, with or without a request id.
func NotLeader(leader string) *connect.Error {
	var err *connect.Error
	if leader == "" {
		err = connect.NewError(connect.CodeUnavailable, errors.New(
			"This governord is not its cluster's leader and knows no leader now; nothing was applied. Retry shortly, at this node or another."))
	} else {
		err = connect.NewError(connect.CodeUnavailable, fmt.Errorf(
			"This governord is not its cluster's leader; nothing was applied. The leader is at %s: send the call there.", leader))
		err.Meta().Set(clientconn.LeaderHeader, leader)
	}
	err.Meta().Set(clientconn.NotAppliedHeader, "true")
	return err
}
