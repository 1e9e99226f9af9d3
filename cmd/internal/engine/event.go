package engine

import "fmt"

// Kind says what an event records.
type Kind uint8

// The kinds of event. Their numbers are part of the record: never reuse one.
const (
	KindSettings       Kind = 1  // Settings changed
	KindSessionOpened  Kind = 2  // Target: new session id, Node: its scope
	KindSessionClosed  Kind = 3  // Target: the session
	KindSessionExpired Kind = 4  // Target: the session
	KindNodeCreated    Kind = 5  // Target: new node id, Node: parent, Spec, optional Charge, Owner
	KindNodeEnded      Kind = 6  // Node, State, Owner: set when its owner session's end ended it
	KindNodesRemoved   Kind = 7  // IDs: ended nodes past retention, each with what is left of its subtree; a step lists children before their parent
	KindConsumed       Kind = 8  // Node, Name: resource, Amount, Until: the booked slot (0: admitted at once), Answer
	KindLeaseGranted   Kind = 9  // Target: new lease id, Node, Name: class, Until: hold deadline
	KindLeaseReleased  Kind = 10 // Target: the lease, Node and Name: its node and class, Report
	KindLeaseExpired   Kind = 11 // Target: the lease (its hold ran out)
	KindQuotaSet       Kind = 12 // Node, Name: resource, Value (nil removes the cap)
	KindLimitSet       Kind = 13 // Node, Name: class, Value (nil removes the limit), Adapt: why a controller moved it
	KindDefaultsSet    Kind = 14 // Node, Defaults
	KindRateSet        Kind = 15 // Node, Name: resource, Rate (nil removes the rate cap)
	KindRateReset      Kind = 16 // Node, Name: resource; the bucket is full again
	KindRateDrained    Kind = 17 // Node, Name: resource, Amount: a refused charge that emptied the rate caps refusing it
	KindKeysForgotten  Kind = 18 // IDs: idle key nodes (and group nodes they emptied), in the order they go
	KindNodeEnding     Kind = 19 // Node, State, Owner as for KindNodeEnded: the node ends; its subtree, too wide for one step, is ended by KindNodesEnded
	KindNodesEnded     Kind = 20 // IDs: active nodes beneath an ended node, each ended as its ended parent makes it
	kindEnd            Kind = 21
)

var kindNames = [...]string{
	KindSettings: "settings", KindSessionOpened: "session_opened", KindSessionClosed: "session_closed",
	KindSessionExpired: "session_expired", KindNodeCreated: "node_created", KindNodeEnded: "node_ended",
	KindNodesRemoved: "nodes_removed", KindConsumed: "consumed", KindLeaseGranted: "lease_granted",
	KindLeaseReleased: "lease_released", KindLeaseExpired: "lease_expired", KindQuotaSet: "quota_set",
	KindLimitSet: "limit_set", KindDefaultsSet: "defaults_set", KindRateSet: "rate_set",
	KindRateReset: "rate_reset", KindRateDrained: "rate_drained", KindKeysForgotten: "keys_forgotten",
	KindNodeEnding: "node_ending", KindNodesEnded: "nodes_ended",
}

func (k Kind) String() string {
	if k > 0 && k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Charge is an amount of a resource charged to a node's whole chain.
type Charge struct {
	Resource string `json:"resource"`
	Amount   int64  `json:"amount"`
}

// Report is what a released lease says about the downstream it guarded.
type Report struct {
	LatencyNanos int64 `json:"latency,omitempty"`
	Overloaded   bool  `json:"overloaded,omitempty"`
}

// Adapt records what made an adaptive controller move a limit, so the record
// explains every change it made.
type Adapt struct {
	Samples       int     `json:"samples"`
	P95Nanos      int64   `json:"p95"`
	OverloadShare float64 `json:"overload_share"`
	Reason        string  `json:"reason"`
}

// Event is one change to the tree. Which fields are set depends on Kind (see
// the Kind constants). Session, Request and ArgHash name the caller whose
// call made the change, so its request id is remembered on replay.
type Event struct {
	Seq      uint64    `json:"seq"`
	Time     int64     `json:"time"` // the engine's time, unix nanoseconds
	Kind     Kind      `json:"kind"`
	Session  ID        `json:"session,omitempty"`
	Request  string    `json:"request,omitempty"`
	ArgHash  uint64    `json:"arg_hash,omitempty"`
	Target   ID        `json:"target,omitempty"`
	Node     ID        `json:"node,omitempty"`
	Name     string    `json:"name,omitempty"`
	Amount   int64     `json:"amount,omitempty"`
	Value    *int64    `json:"value,omitempty"`
	Until    int64     `json:"until,omitempty"`
	State    State     `json:"state,omitempty"`
	TTL      int64     `json:"ttl,omitempty"`
	Token    []byte    `json:"token,omitempty"` // SHA-256 of the session token, never the token
	Spec     *Spec     `json:"spec,omitempty"`
	Charge   *Charge   `json:"charge,omitempty"`
	Defaults *Defaults `json:"defaults,omitempty"`
	Settings *Settings `json:"settings,omitempty"`
	Rate     *Rate     `json:"rate,omitempty"`
	Report   Report    `json:"report,omitzero"`
	Adapt    *Adapt    `json:"adapt,omitempty"`
	IDs      []ID      `json:"ids,omitempty"`
	Answer   *Tightest `json:"answer,omitempty"` // Consumed with a request id: the cap its answer named, so a retry gets the same answer
	Owner    ID        `json:"owner,omitempty"`  // the session that owns a node; see KindNodeCreated, KindNodeEnded
}

// EventSeq returns the event's sequence number.
func (ev *Event) EventSeq() uint64 { return ev.Seq }

// EventTime returns the engine's time of the event, in unix nanoseconds.
func (ev *Event) EventTime() int64 { return ev.Time }

// Encode returns the event's stored form: its binary encoding (see
// docs/record.md).
func (ev *Event) Encode() ([]byte, error) { return appendEvent(make([]byte, 0, 64), ev), nil }

// DecodeEvent parses an event's stored form, binary or (as records written
// before the binary form were) JSON. It checks the shape, not whether the
// event fits the tree; replay checks that.
func DecodeEvent(data []byte) (*Event, error) {
	ev, err := decodeForm(data, "event", decodeEvent)
	if err != nil {
		return nil, err
	}
	if ev.Kind == 0 || ev.Kind >= kindEnd {
		return nil, corrupt("event %d has unknown kind %d", ev.Seq, ev.Kind)
	}
	if ev.Seq == 0 {
		return nil, corrupt("event without a sequence number")
	}
	return ev, nil
}
