package cluster

import (
	"errors"
	"fmt"
)

// ErrCorruptCommand wraps every failure to read a command from the log.
var ErrCorruptCommand = errors.New("corrupt replicated command")

// ErrNotLeader is returned by a node that is not the leader. Leader is the
// API address ("host:port") of the leader this node knows of, empty when it
// knows of none; a client retries there. The server answers it with Connect
// code Unavailable and the response header governor-leader: Leader.
type ErrNotLeader struct {
	Leader string
}

func (e *ErrNotLeader) Error() string {
	if e.Leader == "" {
		return "this governord is not the cluster's leader and knows of no leader now; retry in a moment, or at another member"
	}
	return fmt.Sprintf("this governord is not the cluster's leader; send the call to the leader at %s", e.Leader)
}

// ErrUnknownOutcome says a command was handed to raft but this node lost
// its leadership before learning whether it was committed. Retrying the call
// with the same request id is safe: the replicas remember request ids, so a
// call that did commit answers with its first result and charges nothing.
var ErrUnknownOutcome = errors.New("the leader changed before the call's outcome was known; retry it with the same request id")

// ErrMismatch is reported when a replica's checksum differs from the
// leader's at the same point of the log: a command applied differently.
var ErrMismatch = errors.New("replica state differs from the leader's at the same log index")

// ErrBadMember is wrapped by a membership change whose arguments are wrong
// (an empty id, an address that is not host:port): nothing changed.
var ErrBadMember = errors.New("bad cluster member")

// ErrMembership is wrapped by a membership change the cluster's state does
// not allow now (an unknown id, an address in use, the last voter, the
// leader itself): nothing changed.
var ErrMembership = errors.New("membership change refused")

// memberError is a refused membership change: its message is the sentence
// a user reads, and it unwraps to ErrBadMember or ErrMembership.
type memberError struct {
	kind error
	msg  string
}

func (e *memberError) Error() string { return e.msg }
func (e *memberError) Unwrap() error { return e.kind }

func badMember(format string, args ...any) error {
	return &memberError{kind: ErrBadMember, msg: fmt.Sprintf(format, args...)}
}

func refuseMember(format string, args ...any) error {
	return &memberError{kind: ErrMembership, msg: fmt.Sprintf(format, args...)}
}
