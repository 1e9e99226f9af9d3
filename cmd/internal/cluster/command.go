package cluster

import (
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// Op names the engine call a command makes.
type Op uint8

// The commands. Each but OpChecksum, OpCompare, OpBatch and OpMember is one
// mutating engine call; the numbers are part of the log: never reuse one.
const (
	OpCreate Op = iota + 1
	OpEnsure
	OpConsume
	OpConsumeWith
	OpConsumeKeyed
	OpCancel
	OpClose
	OpAcquire
	OpRelease
	OpAbandon
	OpOpenSession
	OpHeartbeat
	OpCloseSession
	OpSetQuota
	OpSetLimit
	OpAdjustLimit
	OpSetDefaults
	OpSetRate
	OpResetRate
	OpConfigure
	OpSetBounds
	OpReap
	// OpChecksum makes every replica take a checksum of its state at this
	// point of the log.
	OpChecksum
	// OpCompare makes every replica compare the checksum it took at the
	// OpChecksum at log index Waiter with Sum, the leader's.
	OpCompare
	// OpRevive gives every session one fresh TTL from the command's time
	// (engine.Engine.Revive): a new leader's grace for the heartbeats that
	// could not arrive while there was none.
	OpRevive
	// OpBatch applies the commands in Batch in order, each as if it were an
	// entry of its own at this log index: the leader puts the consumes that
	// arrive together into one entry. Only consumes may be in a batch
	// (batchable), since nothing they do depends on their log index.
	OpBatch
	// OpMember records a member's API address (API) by its id (Name), or
	// forgets the member when API is empty: the table a follower names
	// the leader's API address from (members.go).
	OpMember
	// OpTryAcquire is engine.Engine.TryAcquire: a grant if a slot fits
	// now, otherwise a refusal that queues nothing.
	OpTryAcquire
	opEnd
)

var opNames = [opEnd]string{"", "create", "ensure", "consume", "consume_with", "consume_keyed", "cancel", "close",
	"acquire", "release", "abandon", "open_session", "heartbeat", "close_session", "set_quota", "set_limit",
	"adjust_limit", "set_defaults", "set_rate", "reset_rate", "configure", "set_bounds", "reap", "checksum", "compare", "revive", "batch", "member", "try_acquire"}

func (o Op) String() string {
	if o > 0 && o < opEnd {
		return opNames[o]
	}
	return "unknown"
}

// Command is one engine call as the log holds it, with everything that is
// not deterministic stamped in by the leader: the time, the caller's session
// and request id, a new session's token. Which fields an Op reads is listed
// at each field; the others stay zero.
type Command struct {
	Op      Op
	Now     int64     // the leader's time, unix nanoseconds; the replica uses max(Now, its last)
	Session engine.ID // the caller's session (Call.Session)
	Request string    // the caller's request id (Call.Request)

	Target engine.ID     // the node (or parent for Create, Ensure); the lease for Release
	Name   string        // resource or class
	Amount int64         // n of a consume; the new value of AdjustLimit
	Value  *int64        // SetQuota, SetLimit: the value, nil to remove; AdjustLimit: from
	Span   time.Duration // Acquire, TryAcquire: max hold; OpenSession: ttl
	Token  [32]byte      // OpenSession: the token the leader chose

	Spec     *engine.Spec   // Create, Ensure
	Charge   *engine.Charge // Ensure
	Options  engine.ConsumeOptions
	Keyed    *engine.KeyedLimit // ConsumeKeyed
	Report   engine.Report      // Release
	Adapt    engine.Adapt       // AdjustLimit
	Defaults *engine.Defaults   // SetDefaults
	Rate     *engine.Rate       // SetRate: the rate, nil to remove
	Settings *engine.Settings   // Configure
	Bounds   *engine.BoundsConfig

	Renew  []engine.ID // Heartbeat: the sessions renewed, in one batch
	Waiter uint64      // Abandon: log index of the Acquire that queued; Compare: of the Checksum
	Sum    uint64      // Compare: the leader's checksum
	API    string      // Member: the member's API address, empty to forget it

	Batch []*Command // Batch: the commands, each batchable
}

// batchable reports whether a command of op may be in an OpBatch.
func batchable(op Op) bool {
	return op == OpConsume || op == OpConsumeWith || op == OpConsumeKeyed
}

// Result is the engine's answer to one command, as Apply returned it on the
// replica that applied it. Seq is Call.Seq after the call.
type Result struct {
	Seq     uint64
	Node    engine.NodeInfo
	Created bool
	Consume engine.ConsumeResult
	Lease   engine.LeaseInfo
	Waiter  *engine.Waiter
	Outcome engine.Outcome
	Session engine.SessionInfo
	Reaped  int
	Beats   []Beat
	Sum     uint64
	Batch   []*Result // Batch: each command's, in order
	Err     error
}

// Beat is the answer to one renewal of a heartbeat batch.
type Beat struct {
	Session engine.SessionInfo
	Err     error
}
