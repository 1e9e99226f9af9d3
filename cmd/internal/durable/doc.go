// Package durable makes the engine's record durable and rebuilds the engine
// from it at start.
//
// Open loads the newest snapshot and replays the events after it through the
// engine (restart is replay), gives every session one fresh TTL, and then
// wires the engine's event sink to an eventlog.Writer. From then on every call
// follows the rule write before reply: the engine applies a change in memory
// and emits its event under its lock; the caller waits (Store.Wait) until the
// writer has committed that event, in a batch with everyone else's, and only
// then answers. After each commit the writer hands the batch to
// Options.Committed and then gives its events back to the engine
// (Engine.Recycle), which makes later events in them.
//
// Goroutines: the writer's commit goroutine (owned by eventlog.Writer) and one
// snapshot goroutine, started by Open and stopped by Close. While Open loads
// the record, one more goroutine restores the snapshot as the events after it
// are read and decoded; Open waits for it before it returns. The snapshot
// goroutine owns the snapshot image: when enough events have accumulated it
// captures what changed under the engine lock, then merges, waits for the
// events it covers to be on record, encodes, compresses (gzip) and saves
// outside the lock.
package durable
