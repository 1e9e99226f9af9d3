package server

import (
	"errors"
	"fmt"

	"connectrpc.com/connect"
)

// leaderHeader is the response metadata naming the leader's API address,
// which a client follows.
const leaderHeader = "Governor-Leader"

// NotLeader is the answer of a cluster member that is not the leader, to
// any call: Unavailable, naming the leader's API address, host:port, in the
// message and in the Governor-Leader response metadata. With no leader
// known (leader is ""), the metadata is absent and the message says to
// retry. Nothing was applied: the call may be sent again anywhere.
func NotLeader(leader string) *connect.Error {
	if leader == "" {
		return connect.NewError(connect.CodeUnavailable, errors.New(
			"This governord is not its cluster's leader and knows no leader now; nothing was applied. Retry shortly, at this node or another."))
	}
	err := connect.NewError(connect.CodeUnavailable, fmt.Errorf(
		"This governord is not its cluster's leader; nothing was applied. The leader is at %s: send the call there.", leader))
	err.Meta().Set(leaderHeader, leader)
	return err
}
