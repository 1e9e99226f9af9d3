// Package cluster replicates the engine with hashicorp/raft: the engine is
// the raft.FSM, and every replica applies the same commands in log order.
//
// Commands, not results, are replicated. A mutating engine call becomes a
// [Command] (a compact protobuf-wire encoding), and the leader stamps into it
// everything that is not deterministic: the time (each replica applies at
// max(stamp, last applied time), so time never goes back when the leader
// changes hosts), the caller's session and request id, a new session's
// token. Lease ids and sequence numbers come from the engine's counters, so
// they stay monotone across failovers, and the request-id memory lives in
// the engine, so a retry after an unknown outcome never charges twice.
//
// Goroutines: raft's own (its FSM goroutine is the only one that applies,
// snapshots and restores the replica); two per [Node], started by [Open]
// and stopped by [Node.Shutdown]: duties, which reaps and compares
// checksums while the member leads, and watch, which wakes the calls held
// while the leadership moves at each change raft observes; while reads
// wait for a leadership check, one goroutine that runs the checks one
// after another and ends when none waits; and one per raft future a call
// waits for, which ends with the future's answer (raft never answers the
// futures it dropped at shutdown: those stay blocked, one per call then in
// flight, while their calls return). Heartbeat batches run on their
// callers.
//
// Replicas check that they agree: the leader puts a checksum command in the
// log every so often, and a compare command carrying its own checksum; a
// replica whose checksum differs records a [Mismatch].
//
// The log and stable stores on disk are raft-wal (data dir/wal: the log
// in append-only segment files, one write and one fsync per append; the
// stable store and the list of segments in a small bbolt file), with the
// latest entries cached in memory by raft's LogCache. It replaced
// raft-boltdb/v2, whose append is a bbolt transaction commit (two fsyncs)
// and which bounded the cluster's throughput. A data directory holding
// raft.db from an earlier governord is refused. raft-wal's metrics import
// go-metrics/compat, which go-metrics v0.7.0 (raft v1.8.0's) dropped, so
// cmd/go.mod pins go-metrics to v0.6.1 with a replace. None of this
// reaches the SDK module.
//
// Queued acquires are replicated through the log but are in no snapshot
// yet, so a replica takes no snapshot while one waits (issue 16).
package cluster
