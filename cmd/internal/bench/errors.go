package bench

import "errors"

var (
	// ErrOptions marks options that are out of range; the message names the
	// option and what it allows.
	ErrOptions = errors.New("govbench options")
	// ErrDownstream marks an answer of the simulated downstream that is
	// neither served nor shed.
	ErrDownstream = errors.New("unexpected downstream answer")
	// ErrNeedsOwnGovernord marks a scenario that must start governord with a
	// configuration of its own, or kill it, and so cannot run against -addr.
	ErrNeedsOwnGovernord = errors.New("needs a governord of its own")
	// ErrUnexpected marks an answer of governord that a scenario did not
	// expect: the message says what was asked and what came back.
	ErrUnexpected = errors.New("unexpected answer from governord")
)
