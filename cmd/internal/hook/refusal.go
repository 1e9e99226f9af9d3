package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// prefix starts every refusal, so the model knows who refused.
const prefix = "Governor blocked this tool: "

// stop ends a refusal the model must not work around.
const stop = " Do not retry; stop and tell the user."

// Explain turns any error of the hook into the refusal the model reads.
func Explain(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return Blocked(describe(err), err)
}

// Blocked is the refusal for why, a sentence without the prefix, that the
// model must not work around; err is the cause, or nil.
func Blocked(why string, err error) *Refusal {
	return &Refusal{Message: prefix + why + stop, Err: err}
}

// describe says what went wrong, in a sentence without the prefix.
func describe(err error) string {
	var ce *connect.Error
	switch {
	case errors.Is(err, ErrInput):
		return "the hook could not use the CLI's payload: " + sentence(err.Error()) + " The hook is misconfigured."
	case errors.Is(err, clientconn.ErrConfig):
		return "the connection settings are unusable: " + sentence(strings.TrimPrefix(err.Error(), clientconn.ErrConfig.Error()+": "))
	case errors.Is(err, ErrState):
		return "the hook's state directory is unusable: " + sentence(err.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "governord did not answer in time."
	case errors.As(err, &ce):
		return describeCode(ce)
	}
	return sentence(err.Error())
}

func describeCode(ce *connect.Error) string {
	switch ce.Code() {
	case connect.CodeUnauthenticated:
		return "governord does not accept the API key in " + clientconn.EnvAPIKey + ". Set " + clientconn.EnvAPIKey +
			", in the environment the agent CLI runs its hooks with, to your tenant's key."
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeCanceled, connect.CodeUnknown:
		return "governord could not be reached: " + sentence(ce.Message())
	case connect.CodeInvalidArgument:
		return "governord refused the hook's request: " + sentence(ce.Message()) + " The hook is misconfigured."
	}
	return "governord answered " + ce.Code().String() + ": " + sentence(ce.Message())
}

// denied is the refusal for a spent budget: which budget, of which node,
// used against what limit.
func denied(ce *connect.Error, what string) *Refusal {
	d := denialOf(ce)
	if d == nil {
		return nil
	}
	if d.Shared {
		return &Refusal{Err: ce, Message: fmt.Sprintf(
			"%sa %s budget shared above this tenant is spent, so %s.%s",
			prefix, d.Resource, what, strings.TrimSuffix(stop, ".")+" the budget is exhausted.")}
	}
	return &Refusal{Err: ce, Message: fmt.Sprintf(
		"%sthe %s budget of %q is spent (%d of %d used), so %s.%s",
		prefix, d.Resource, d.NodeName, d.Used, d.Limit, what, strings.TrimSuffix(stop, ".")+" the budget is exhausted.")}
}

func denialOf(ce *connect.Error) *governorv1.Denial {
	if ce.Code() != connect.CodeResourceExhausted {
		return nil
	}
	for _, d := range ce.Details() {
		v, err := d.Value()
		if err != nil {
			continue
		}
		if den, ok := v.(*governorv1.Denial); ok {
			return den
		}
	}
	return nil
}

// ended is the refusal for a run or subagent whose node is no longer active.
func ended(kind string, n *governorv1.NodeInfo) *Refusal {
	var why string
	switch n.GetState() {
	case governorv1.NodeState_NODE_STATE_CANCELLED:
		why = "was cancelled"
	case governorv1.NodeState_NODE_STATE_DEADLINE_EXCEEDED:
		why = "is past its deadline"
	default:
		why = "was closed"
	}
	return Blocked(fmt.Sprintf("the %s %q %s; every later tool call of it is refused.", kind, n.GetName(), why), nil)
}

// sentence ends msg with a full stop.
func sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return "no detail."
	}
	if strings.HasSuffix(msg, ".") {
		return msg
	}
	return msg + "."
}
