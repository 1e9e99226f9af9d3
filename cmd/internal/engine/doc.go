// Package engine holds Governor's whole tree in memory and decides every
// question asked of it: may this task spend one more unit (quotas, and rate
// caps that refill with time: token and leaky buckets, calendar windows,
// scheduled admission), may it run one more thing at once (leases), is it
// still allowed to run (deadlines, cancellation).
//
// The engine is pure logic. It does no I/O, keeps no goroutine and never reads
// the time itself: a [Clock] and a [Sink] are injected. One mutex guards all
// state. Every operation checks the target node's whole chain (the node and
// each ancestor up to the root) and applies its change to all of it or to none.
//
// Every change is an [Event] with the next sequence number and the engine's
// time. A live operation decides, builds the event and applies it through the
// same function that replay uses, so a tree rebuilt from its events (or from a
// snapshot plus later events) is the tree that was live. Decisions that time
// makes (a session lapsed, a deadline passed, a lease's hold ran out) are
// events of their own, taken lazily by any call that touches the object and by
// [Engine.Reap]; results never depend on when the reaper runs.
//
// Every public method is safe for concurrent use. Methods whose name ends in
// Locked must be called with Engine.mu held.
package engine
