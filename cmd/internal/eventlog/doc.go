// Package eventlog is Governor's durable record: the engine's events, in
// sequence, after the newest snapshot of its state. It knows nothing of the
// engine: an event reaches it as an [Entry] (a sequence number, a time, and a
// way to encode itself) and leaves it as a [Record] of opaque bytes.
//
// A [Backend] stores the record: [Open] picks SQLite ("sqlite:PATH"),
// PostgreSQL ("postgres://…") or memory ("") by URL and applies the schema
// migrations embedded in the binary, refusing a database that a newer binary
// wrote. A [Writer] feeds a Backend by group commit.
//
// # Durability
//
// Four rules make a crash lose nothing a caller was told.
//
//  1. Write before reply. The engine, under its lock, applies a change,
//     gives its event the next sequence number and calls [Writer.Add], which
//     only queues it. Outside the lock the caller's handler calls
//     [Writer.Wait] for that number, and replies only when it returns nil.
//     Memory may run ahead of the record; no reply ever does. Because the
//     record is always a prefix of the sequence, an answer that depended on
//     an earlier event is only delivered once that event is durable too.
//  2. Group commit. One goroutine takes everything pending, encodes it and
//     appends it in one transaction; what is added meanwhile is the next
//     batch, so batches grow with load. [Writer.Room] makes producers wait
//     while the backlog is at its bound, before they take the engine lock.
//  3. A failed commit stops the process. After a failed Append the engine
//     holds changes that are not on record. The writer refuses every later
//     commit, fails every Wait for a sequence number that is not durable, and
//     closes [Writer.Failed]; the daemon stops serving on it and a supervisor
//     restarts it from the record. Nothing is rolled back in memory.
//  4. Restart is replay. [Backend.Load] hands back the newest snapshot and
//     every event after it. [Backend.SaveSnapshot] stores a snapshot and
//     deletes the events it covers in one transaction, so there is never a
//     snapshot with a hole after it; the caller captures the state under the
//     engine lock, encodes it outside, and calls Wait for its sequence
//     number before saving it (a snapshot ahead of the record is refused).
//
// # Goroutines and ownership
//
// A Writer owns one goroutine, started by [Writer.Start] (idempotent) and
// ended by [Writer.Stop] (idempotent, waits): it alone calls Append on the
// backend, encodes entries, and completes waiters. Entries belong to the
// writer from Add until they are committed; the engine must not change them.
// Producers own nothing: Add and Room touch only the writer's queue under
// its short mutex, never I/O. Waiters share one channel per batch, closed
// when the batch commits or fails. The caller owns the Backend: it opens it,
// may call SaveSnapshot and Load from any goroutine, and closes it after
// Stop. The backends start no goroutine of their own beyond their database
// drivers' pools, which Close ends.
package eventlog
