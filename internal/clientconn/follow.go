package clientconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// Bounds of the attempts of one call across a cluster's addresses.
const (
	roundsPerCall = 3                      // passes over the list before a call gives up
	backoffBase   = 10 * time.Millisecond  // the first wait's ceiling
	backoffMax    = 500 * time.Millisecond // no wait is longer
)

// outcome is what one attempt of a call came to.
type outcome int

const (
	answered   outcome = iota // the node answered: the call's result or its refusal
	redirected                // a node that is not the leader refused it and named the leader
	unsent                    // nothing was applied: no connection was made, or a node refused the call before its log
	unanswered                // sent, but no answer came: it may or may not have been applied
)

// replayable are the calls that change nothing, or nothing more when
// repeated, and need no request id to be sent again after an unknown
// outcome.
var replayable = map[string]bool{
	governorv1connect.GovernorServiceGetNodeProcedure:   true,
	governorv1connect.GovernorServiceValidateProcedure:  true,
	governorv1connect.GovernorServiceExplainProcedure:   true,
	governorv1connect.GovernorServiceHeartbeatProcedure: true,
}

// follow sends every call to the node the router believes is the leader.
// A call refused by a node that names the leader goes to the leader; a
// call that reached no node, or that a node refused saying it applied
// nothing (NotAppliedHeader), goes to the next address; a call sent but
// not answered goes to the next address when repeating it applies
// nothing twice: a call that changes nothing, or one that carries a
// request id. It waits a capped, jittered backoff between attempts, ends
// with the call's context, and gives up after roundsPerCall passes over
// the list with an Unavailable error that names the addresses tried.
type follow struct{ r *router }

var _ connect.Interceptor = follow{}

func (f follow) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		again := replayable[req.Spec().Procedure] || carriesRequestID(req.Any())
		var tried []string
		for attempt := 0; ; attempt++ {
			addr := f.r.target()
			tried = append(tried, addr)
			res, err := next(withTarget(ctx, addr), req)
			if err == nil {
				return res, nil
			}
			o := f.r.after(addr, err)
			switch {
			case o == answered, o == unanswered && !again:
				return nil, err
			case attempt+1 >= roundsPerCall*len(f.r.addrs):
				return nil, gaveUp(tried, err)
			}
			if o != redirected || attempt > 0 {
				if Sleep(ctx, Jitter(attempt, backoffBase, backoffMax)) != nil {
					return nil, gaveUp(tried, err)
				}
			}
		}
	}
}

func (f follow) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		addr := f.r.target()
		return &followedStream{StreamingClientConn: next(withTarget(ctx, addr), spec), r: f.r, addr: addr}
	}
}

func (f follow) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// followedStream tells the router how a stream ended, so that the stream
// opened again goes to the leader; it does not open it again itself.
type followedStream struct {
	connect.StreamingClientConn
	r    *router
	addr string
}

func (s *followedStream) Receive(m any) error {
	err := s.StreamingClientConn.Receive(m)
	if err != nil && !errors.Is(err, io.EOF) {
		s.r.after(s.addr, err)
	}
	return err
}

// after moves the router as the attempt that went to addr and failed
// with err says, and says what the attempt came to.
func (r *router) after(addr string, err error) outcome {
	var ce *connect.Error
	isConnect := errors.As(err, &ce)
	if isConnect && ce.Code() == connect.CodeUnavailable {
		if leader := ce.Meta().Get(LeaderHeader); leader != "" && checkHostPort(leader) == nil {
			r.follow(leader)
			return redirected
		}
		if connect.IsWireError(ce) && ce.Meta().Get(NotAppliedHeader) == "true" {
			r.failed(addr)
			return unsent
		}
	}
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		r.failed(addr)
		return unsent
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return answered
	case isConnect && connect.IsWireError(ce) && ce.Code() != connect.CodeUnavailable:
		return answered
	}
	r.failed(addr)
	return unanswered
}

// carriesRequestID says whether msg is a request with a request id, which
// governord applies at most once.
func carriesRequestID(msg any) bool {
	m, ok := msg.(proto.Message)
	if !ok {
		return false
	}
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("request_id")
	return fd != nil && fd.Kind() == protoreflect.StringKind && r.Get(fd).String() != ""
}

// gaveUp is the error of a call no address answered.
func gaveUp(tried []string, last error) error {
	return connect.NewError(connect.CodeUnavailable, fmt.Errorf(
		"no governord answered as the leader after %d attempts at %s; check that the nodes run and that %s lists their API addresses: %w",
		len(tried), strings.Join(distinct(tried), ", "), EnvAddr, last))
}

// distinct is addrs without repeats, in the order first seen.
func distinct(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}
