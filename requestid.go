package governor

import (
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
