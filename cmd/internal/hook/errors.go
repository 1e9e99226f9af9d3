package hook

import (
	"errors"
	"fmt"
)

// ErrInput marks a hook payload that cannot be used: not JSON, not an
// object, or missing a field the decision needs.
var ErrInput = errors.New("hook input")

// ErrState marks a lease state file that cannot be read or written.
var ErrState = errors.New("hook state")

// Refusal is a decision to refuse the tool, with the words the model reads.
// Every error the package returns is turned into one by Explain.
type Refusal struct {
	// Message is complete sentences for the model: what happened and what
	// to do.
	Message string
	// Err is the cause, when there is one.
	Err error
}

func (r *Refusal) Error() string {
	if r.Err != nil {
		return fmt.Sprintf("%s (%v)", r.Message, r.Err)
	}
	return r.Message
}

func (r *Refusal) Unwrap() error { return r.Err }
