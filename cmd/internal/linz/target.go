package linz

import (
	"context"
	"errors"
)

// Target is a system under test, as one client sees it. A call that returns
// an error wrapping ErrNotApplied surely took no effect; any other error
// leaves its outcome unknown. Implementations are safe for concurrent use.
type Target interface {
	// Consume charges n to the quota of key; a retry with the same
	// requestID is applied at most once and answers as the first did.
	Consume(ctx context.Context, key string, n int64, requestID string) (bool, error)
	// Read returns the usage of key.
	Read(ctx context.Context, key string) (int64, error)
	// Acquire asks the lease pool for a lease.
	Acquire(ctx context.Context, requestID string) (id string, granted bool, err error)
	// Release gives back lease id and tells whether it was held.
	Release(ctx context.Context, id string) (bool, error)
	// Validate tells whether lease id is held.
	Validate(ctx context.Context, id string) (bool, error)
}

// ErrNotApplied is wrapped by an error of a Target call that surely took no
// effect: refused before it was proposed, or a read that failed.
var ErrNotApplied = errors.New("linz: the call took no effect")
