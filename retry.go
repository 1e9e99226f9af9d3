package governor

import (
	"context"
	"errors"
	"time"

	"governor.dev/governor/internal/clientconn"
)

// RetryOption changes how Retry retries.
type RetryOption func(*retryOpts)

type retryOpts struct {
	attempts  int
	base, max time.Duration
	retryIf   func(error) bool
}

// Default bounds of Retry.
const (
	DefaultAttempts    = 10
	DefaultBackoffBase = 50 * time.Millisecond
	DefaultBackoffMax  = 5 * time.Second
)

// Attempts bounds the attempts of one Retry, the first included; n ≥ 1.
func Attempts(n int) RetryOption { return func(o *retryOpts) { o.attempts = max(n, 1) } }

// Backoff sets the full-jitter backoff: before retry k, a random wait up to
// base·2^(k-1), capped at most.
func Backoff(base, most time.Duration) RetryOption {
	return func(o *retryOpts) { o.base, o.max = base, most }
}

// RetryIf decides which errors are retried; by default every error but
// governor's final ones (denied, task ended, session lost, forbidden, not
// found, invalid, bad key, no task, closed), a spent retry budget and the
// context's.
func RetryIf(f func(error) bool) RetryOption { return func(o *retryOpts) { o.retryIf = f } }

// Retry calls fn until it succeeds, up to the attempts allowed. The first
// attempt is free; every retry, at any nesting depth, first consumes one
// ResourceRetry unit from the task ctx carries, so nested loops share one
// budget. When the budget is spent the last error is returned at once,
// marked with ErrRetryBudget, and enclosing Retry loops return it too
// without retrying.
func Retry(ctx context.Context, fn func(context.Context) error, opts ...RetryOption) error {
	o := retryOpts{attempts: DefaultAttempts, base: DefaultBackoffBase, max: DefaultBackoffMax, retryIf: retryable}
	for _, opt := range opts {
		opt(&o)
	}
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil || errors.Is(err, ErrRetryBudget) || !o.retryIf(err) || attempt >= o.attempts {
			return err
		}
		if _, cerr := Consume(ctx, ResourceRetry, 1); cerr != nil {
			return &budgetError{last: err, why: cerr}
		}
		if serr := clientconn.Sleep(ctx, clientconn.Jitter(attempt-1, o.base, o.max)); serr != nil {
			return errors.Join(err, serr)
		}
	}
}

// final are the errors no retry can change.
var final = []error{
	ErrDenied, ErrTaskEnded, ErrSessionLost, ErrForbidden, ErrNotFound, ErrInvalid,
	ErrBadKey, ErrNoTask, ErrClosed, context.Canceled, context.DeadlineExceeded,
}

func retryable(err error) bool {
	for _, f := range final {
		if errors.Is(err, f) {
			return false
		}
	}
	return true
}
