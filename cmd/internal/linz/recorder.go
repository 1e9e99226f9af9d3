package linz

import (
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Recorder collects the calls of concurrent clients into a history. Times are
// read from one monotonic clock, so a call that returned before another was
// made is ordered before it. The zero value is not usable; call NewRecorder.
// Safe for concurrent use.
type Recorder struct {
	start time.Time

	mu  sync.Mutex // guards ops
	ops []*record
}

// record is one call as recorded.
type record struct {
	op        porcupine.Operation
	forgotten bool // the call surely took no effect and is left out
}

// NewRecorder returns an empty recorder whose clock starts now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Call is one call in flight: made, not yet returned.
type Call struct {
	r   *Recorder
	rec *record
}

// Call records that client made a call with input, and returns the call to
// finish with Return or Unknown. Clients are numbered from zero; a client
// makes one call at a time. A call never finished is Unknown.
func (r *Recorder) Call(client int, input any) Call {
	rec := &record{op: porcupine.Operation{ClientId: client, Input: input, Output: Unknown}}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.op.Call = r.now()
	r.ops = append(r.ops, rec)
	return Call{r: r, rec: rec}
}

// Return records that the call returned output.
func (c Call) Return(output any) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.rec.op.Output = output
	c.rec.op.Return = c.r.now()
}

// Unknown records that the call ended without its client learning whether
// it took effect (a timeout, a lost reply, a crash).
func (c Call) Unknown() {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.rec.op.Output = Unknown
}

// Forget leaves the call out of the history: it failed in a way that surely
// took no effect (refused before it was proposed, or a read that failed).
func (c Call) Forget() {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.rec.forgotten = true
}

// History returns the calls recorded so far, without the forgotten ones.
// Calls whose outcome is unknown (ended with Unknown, or not ended yet)
// return after every other event, at the end of time.
func (r *Recorder) History() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := r.now() + 1
	out := make([]porcupine.Operation, 0, len(r.ops))
	for _, rec := range r.ops {
		if rec.forgotten {
			continue
		}
		o := rec.op
		if isUnknown(o.Output) {
			o.Return = end
		}
		out = append(out, o)
	}
	return out
}

// now reads the recorder's clock; the caller holds mu, so that events
// are stamped in the order they are recorded.
func (r *Recorder) now() int64 { return int64(time.Since(r.start)) }
