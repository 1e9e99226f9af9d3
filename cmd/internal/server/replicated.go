package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/cluster"
	"governor.dev/governor/cmd/internal/engine"
)

// Replicated is the Backend of a cluster member: its calls go through the
// cluster's log on the leader. There is no backlog to wait for and nothing
// to wait on after a call, since an applied command is committed; a member
// that is not the leader answers NotLeader with the leader's API address.
func Replicated(n *cluster.Node) Backend { return replicated{n} }

type replicated struct{ *cluster.Node }

func (replicated) Room(context.Context) error         { return nil }
func (replicated) Wait(context.Context, uint64) error { return nil }
func (replicated) Failed() <-chan struct{}            { return nil }
func (b replicated) Local() *engine.Engine            { return b.FSM().Engine() }

// msgUnknownOutcome is the answer to a call whose command the leader lost
// track of.
const msgUnknownOutcome = "The cluster's leader changed before the outcome of the call was known: it may or may not have been applied. Retrying it with the same request id is safe; it is applied at most once."

// clusterError is a cluster member's refusal as the client sees it; nil
// when err is none.
func clusterError(err error) error {
	var nl *cluster.ErrNotLeader
	switch {
	case errors.As(err, &nl):
		return NotLeader(nl.Leader)
	case errors.Is(err, cluster.ErrUnknownOutcome):
		return unavailable(msgUnknownOutcome)
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return connect.NewError(connect.CodeUnavailable, errors.New("The cluster's leader is too busy to take the call; nothing was applied. Retry it."))
	}
	return nil
}
