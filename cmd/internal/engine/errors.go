package engine

import (
	"errors"
	"fmt"
	"time"
)

// Sentinels for errors.Is. Every error the engine returns matches one of them.
var (
	ErrInvalid         = errors.New("invalid argument")
	ErrNotFound        = errors.New("not found")
	ErrForbidden       = errors.New("outside the session's scope")
	ErrSessionEnded    = errors.New("session ended")
	ErrNodeEnded       = errors.New("node ended")
	ErrDenied          = errors.New("denied")
	ErrRequestMismatch = errors.New("request id reused with different arguments")
	ErrLeaseNotOwner   = errors.New("lease held by another session")
	ErrLeaseReleased   = errors.New("lease released")
	ErrLeaseExpired    = errors.New("lease expired")
	ErrLeaseRevoked    = errors.New("lease revoked")
	ErrLeaseUnknown    = errors.New("unknown lease")
	ErrCorrupt         = errors.New("corrupt record")
	ErrNeverFits       = errors.New("never fits")
	ErrLimitChanged    = errors.New("limit changed since it was read")
	ErrWithdrawn       = errors.New("queued acquire withdrawn")
	ErrNoSlot          = errors.New("no slot free")
)

// InvalidError names the argument that was wrong and what is allowed.
type InvalidError struct {
	Field   string
	Problem string
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Problem }

// Is reports that an InvalidError is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Consumer names a node and what it used.
type Consumer struct {
	Node ID     `json:"node"`
	Name string `json:"name"`
	Used int64  `json:"used"`
}

// DeniedError says which cap refused a consume: the node that holds it, what
// it has used, its limit, what was asked, and the largest consumer beneath it.
// When a rate cap refused, Rate is set and says how much it still admits and
// how long the caller would have to wait.
type DeniedError struct {
	Node      ID
	NodeName  string
	Resource  string
	Used      int64
	Limit     int64
	Requested int64
	// Largest is the child of Node that has used the most of Resource, or
	// Node itself when no child has used any.
	Largest Consumer

	Rate       *Rate         // the rate cap that refused; nil when a quota did
	Remaining  int64         // what the rate cap admits now
	Reset      int64         // unix nanoseconds at which a rate cap would admit the amount, or is full again when it never can
	RetryAfter time.Duration // the wait that would have been needed; 0 when no wait helps
	// NeverFits says no wait helps: the amount is more than a rate cap's
	// burst, or a quota refused. Set only when scheduled admission was asked.
	NeverFits bool
	// Shared says the cap that refused lies above the caller's scope: a
	// budget shared with others. Its node, its figures and its consumers are
	// left out (zero); only Resource, Requested, RetryAfter, Reset and
	// NeverFits are told.
	Shared bool
}

// shared is d as told to a caller the refusing cap lies above.
func (e *DeniedError) shared() *DeniedError {
	return &DeniedError{Resource: e.Resource, Requested: e.Requested, RetryAfter: e.RetryAfter, Reset: e.Reset, NeverFits: e.NeverFits, Shared: true}
}

func (e *DeniedError) Error() string {
	if e.Shared {
		msg := fmt.Sprintf("a %s budget shared above your scope is spent (%d asked)", e.Resource, e.Requested)
		if e.RetryAfter > 0 {
			msg += fmt.Sprintf("; it would admit them in %s", e.RetryAfter)
		}
		return msg
	}
	if e.Rate != nil {
		return e.rateError()
	}
	msg := fmt.Sprintf("the %s budget of %q is spent (%d of %d used, %d more asked)",
		e.Resource, e.NodeName, e.Used, e.Limit, e.Requested)
	if e.Largest.Node != 0 && e.Largest.Node != e.Node {
		msg += fmt.Sprintf("; the largest consumer is %q with %d", e.Largest.Name, e.Largest.Used)
	}
	return msg
}

func (e *DeniedError) rateError() string {
	r := e.Rate
	per := r.Period.String()
	if r.Calendar != NoCalendar {
		per = r.Calendar.String()
	}
	msg := fmt.Sprintf("the %s rate of %q allows %d per %s and has %d left now (%d asked)",
		e.Resource, e.NodeName, r.Limit, per, e.Remaining, e.Requested)
	switch {
	case e.RetryAfter > 0:
		msg += fmt.Sprintf("; it would admit them in %s", e.RetryAfter)
	case r.Algorithm == LeakyBucket && e.Requested > r.burst():
		msg += fmt.Sprintf("; no wait helps, since it never holds more than a burst of %d", r.burst())
	default:
		msg += "; no wait helps, since it never holds that many"
	}
	return msg
}

// Is reports that a DeniedError is ErrDenied, and ErrNeverFits when no wait
// would help.
func (e *DeniedError) Is(target error) bool {
	return target == ErrDenied || target == ErrNeverFits && e.NeverFits
}

// LeaseError says how a lease that a call named has ended, or that it was
// never known.
type LeaseError struct {
	Lease   ID
	Outcome Outcome
}

func (e *LeaseError) Error() string {
	return fmt.Sprintf("lease %d: %s", e.Lease, e.Outcome)
}

// Is matches the sentinel of the lease's outcome.
func (e *LeaseError) Is(target error) bool {
	switch e.Outcome {
	case OutcomeReleased:
		return target == ErrLeaseReleased
	case OutcomeExpired:
		return target == ErrLeaseExpired
	case OutcomeRevoked:
		return target == ErrLeaseRevoked
	case OutcomeNotOwner:
		return target == ErrLeaseNotOwner
	case OutcomeUnknown:
		return target == ErrLeaseUnknown
	}
	return false
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
