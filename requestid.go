package governor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// requestIDs hands out the request ids of calls that change state: a
// random prefix per client and a counter, so a retry of the same call
// repeats its id and no two calls share one.
type requestIDs struct {
	prefix string
	n      *atomic.Uint64
}

func newRequestIDs() requestIDs {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return requestIDs{prefix: hex.EncodeToString(b[:]) + "-", n: new(atomic.Uint64)}
}

// next returns a request id never returned before by this client.
func (r requestIDs) next() string {
	return r.prefix + strconv.FormatUint(r.n.Add(1), 10)
}

// of returns the request id WithRequestID set on ctx, or the next one.
func (r requestIDs) of(ctx context.Context) string {
	if id, _ := ctx.Value(requestIDKey{}).(string); id != "" {
		return id
	}
	return r.next()
}

type requestIDKey struct{}

// WithRequestID returns a context whose call that changes state (Consume,
// Wait, Acquire, NewTask) carries id as its request id, in place of one
// the client makes up: a caller that retries work, even from a fresh
// attempt of its own, repeats the id, and governord applies the call at
// most once per session and answers a repeat with the first result. The
// same id with other arguments is refused with ErrInvalid. Use a context
// per call: two different calls made with it share the id. The contexts
// NewTask returns do not carry it. governord takes ids of up to 256 bytes.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}
