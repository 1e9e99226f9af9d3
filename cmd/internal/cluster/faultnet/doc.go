// Package faultnet is a network of raft transports in one process that a test
// can break at any moment: isolate a node, partition the nodes into groups,
// cut one direction between two nodes, delay links (fixed, or random per
// message from a seeded source), drop a fraction of messages, and heal.
//
// It is its own raft.Transport rather than a wrapper of raft's
// InmemTransport, because a fault must act on each leg of an exchange: a
// request that is lost never reaches the peer, while a reply that is lost
// leaves the peer changed and the caller uninformed, which is the case that
// makes outcomes unknown. InmemTransport hides both legs behind one call and
// its pipeline behind unexported types. Messages are handed over as Go values,
// not encoded, as InmemTransport does; the faults, not the bytes, are what the
// tests exercise.
//
// Every kind of exchange honours the faults: AppendEntries (heartbeats
// included, which go to the heartbeat handler when raft sets one, as they do
// over TCP), pipelined AppendEntries, RequestVote, RequestPreVote,
// InstallSnapshot and TimeoutNow. A dropped leg fails the call with an error
// wrapping ErrDropped after the leg's delay, as a connection that breaks does;
// it never blocks until the timeout.
package faultnet
