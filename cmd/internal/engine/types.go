package engine

import "time"

// ID names a node, a session or a lease. All three come from one counter that
// only grows and is never reissued, so a larger lease id is a later grant: a
// lease id is a fencing token.
type ID uint64

// RootID is the id of the root node, which exists in every engine.
const RootID ID = 1

// MaxDepth is the deepest a node may sit below the root.
const MaxDepth = 32

// MaxRetention is the longest retention a spec may give its node.
const MaxRetention = 366 * 24 * time.Hour

// What a session remembers of its request ids (SPEC §9): always its most
// recent RequestMemory, and besides those every id of the last
// RequestWindow, up to RequestMemoryMax in all. The window outlasts any
// retry a client makes across a leader change, however busy the session.
const (
	RequestMemory    = 1024
	RequestWindow    = time.Minute
	RequestMemoryMax = 65_536
)

// State is where a node is in its life. Done, Cancelled and DeadlineExceeded
// are final.
type State uint8

// The states of a node.
const (
	Active State = iota
	Done
	Cancelled
	DeadlineExceeded
)

var stateNames = [...]string{"active", "done", "cancelled", "deadline_exceeded"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// Clock tells the engine the time. The engine never reads the time any other
// way.
type Clock interface {
	Now() time.Time
}

// Sink receives every event, in sequence order, with the engine lock held. It
// must not block, do I/O or call back into the engine; it may only keep the
// event (for example on a pending list) for a writer that runs elsewhere. An
// event handed to the sink is never modified again until the sink gives it
// back with Engine.Recycle.
type Sink interface {
	Emit(ev *Event)
}

// Spec describes a node to create. The zero value of every field means "not
// set": no quota, no limit, no deadline, weight 1, priority 0.
type Spec struct {
	Name     string           `json:"name"`
	Quotas   map[string]int64 `json:"quotas,omitempty"`
	Limits   map[string]int64 `json:"limits,omitempty"`
	Rates    map[string]Rate  `json:"rates,omitempty"`
	Deadline int64            `json:"deadline,omitempty"` // unix nanoseconds; 0 is none
	Weight   int32            `json:"weight,omitempty"`   // share of the fair queue, for a tenant; 0 means 1
	Priority int32            `json:"priority,omitempty"` // higher is served first inside a tenant
	// Retention is how long the node stays in the tree once it has ended,
	// if longer than the node_retention setting; 0 is the setting. A
	// caller that finds its node again by name (Ensure) sets it, so that an
	// ended node is found ended, not made anew, for as long as it needs.
	Retention time.Duration `json:"retention,omitempty"`
	// Keyed is set only by ConsumeKeyed, on the nodes it creates.
	Keyed Keyed `json:"keyed,omitempty"`
	// Detached keeps the node alive when the session that created it ends.
	// Without it, a node created through a session is owned by it and ends
	// as Cancelled when the session ends (closed or lapsed).
	Detached bool `json:"detached,omitempty"`
}

// Caps is a set of quotas (resource to cap), concurrency limits (class to
// slots) and rate caps (resource to rate).
type Caps struct {
	Quotas map[string]int64 `json:"quotas,omitempty"`
	Limits map[string]int64 `json:"limits,omitempty"`
	Rates  map[string]Rate  `json:"rates,omitempty"`
}

func (c Caps) clone() Caps {
	return Caps{Quotas: copyCaps(c.Quotas), Limits: copyCaps(c.Limits), Rates: copyRates(c.Rates)}
}

// Defaults shape the nodes created under a node from then on. A child created
// under it starts with Caps (where its own spec is silent), and the child's
// own defaults become Children, so grandchildren start with those.
type Defaults struct {
	Caps
	Children *Caps `json:"children,omitempty"`
}

// Settings are the engine's own knobs. They are part of the record: a change
// is an event, so replay uses the settings that were in force at the time.
type Settings struct {
	// TombstoneTTL is how long an ended lease is remembered, so that a late
	// release learns how it ended.
	TombstoneTTL time.Duration `json:"tombstone_ttl"`
	// NodeRetention is how long an ended node stays in the tree before it is
	// removed and its usage folded into its parent.
	NodeRetention time.Duration `json:"node_retention"`
	// MaxScheduleWait is the longest wait a consume with MaxWait may be
	// booked for, whatever the caller asked; 0 books nothing.
	MaxScheduleWait time.Duration `json:"max_schedule_wait,omitempty"`
	// KeyIdle is how long a node ConsumeKeyed created stays once it is in
	// the state a new one would start in before it is forgotten; 0 keeps
	// every key.
	KeyIdle time.Duration `json:"key_idle,omitempty"`
}

// DefaultSettings are the settings of a new engine.
func DefaultSettings() Settings {
	return Settings{TombstoneTTL: time.Minute, NodeRetention: 10 * time.Minute, MaxScheduleWait: 5 * time.Minute}
}

// Call carries who is asking and, on return, how far the record must reach
// before the answer may be given.
type Call struct {
	// Session is the caller's session. Zero means the daemon itself (its
	// configuration, its controllers): no scope applies and no request id is
	// remembered.
	Session ID
	// Request is an optional request id. Repeating a call with the same id
	// returns the first result and applies nothing.
	Request string
	// Seq is set by every method, also when it returns an error: the answer
	// depends on state up to this sequence number, so it may be given only
	// once the record holds that number.
	Seq uint64
}
