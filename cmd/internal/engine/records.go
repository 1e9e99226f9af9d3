package engine

import "sort"

// Snapshot is the whole engine at one sequence number, in a stable order: what a
// snapshot stores. Queued acquires are not part of it: their callers are gone
// after a restart.
type Snapshot struct {
	Seq      uint64       `json:"seq"`
	Time     int64        `json:"time"`
	Next     ID           `json:"next"`
	Settings Settings     `json:"settings"`
	Nodes    []NodeRec    `json:"nodes"`
	Sessions []SessionRec `json:"sessions,omitempty"`
	Leases   []LeaseRec   `json:"leases,omitempty"`
	Tombs    []TombRec    `json:"tombs,omitempty"`
}

// NodeRec is a node as a snapshot stores it. Res holds pointers because a
// snapshot image keeps a record of every node, and a map's slots are as wide
// as its values: a map of one ResRec would cost about 900 bytes.
type NodeRec struct {
	ID        ID                  `json:"id"`
	Parent    ID                  `json:"parent,omitempty"`
	Name      string              `json:"name"`
	State     State               `json:"state,omitempty"`
	Created   int64               `json:"created,omitempty"`
	Ended     int64               `json:"ended,omitempty"`
	Deadline  int64               `json:"deadline,omitempty"`
	Weight    int32               `json:"weight,omitempty"`
	Priority  int32               `json:"priority,omitempty"`
	Res       map[string]*ResRec  `json:"res,omitempty"`
	Cls       map[string]ClassRec `json:"cls,omitempty"`
	Defaults  Defaults            `json:"defaults"`
	Retention int64               `json:"retention,omitempty"`
	Keyed     Keyed               `json:"keyed,omitempty"`
	KeyRes    string              `json:"key_res,omitempty"`
	// Owner is the session whose end ends the node; OwnerEnded says that
	// end is what ended it.
	Owner      ID   `json:"owner,omitempty"`
	OwnerEnded bool `json:"owner_ended,omitempty"`
}

// ResRec is one resource of one node.
type ResRec struct {
	Capped  bool     `json:"capped,omitempty"`
	Cap     int64    `json:"cap,omitempty"`
	Used    int64    `json:"used,omitempty"`
	Own     int64    `json:"own,omitempty"`
	Settled int64    `json:"settled,omitempty"`
	Top     Consumer `json:"top"`
	Rate    *RateRec `json:"rate,omitempty"`
}

// ClassRec is one lease class of one node.
type ClassRec struct {
	Limited bool  `json:"limited,omitempty"`
	Limit   int64 `json:"limit,omitempty"`
	Held    int64 `json:"held,omitempty"`
}

// SessionRec is a session as a snapshot stores it, with the request ids it
// remembers, oldest first.
type SessionRec struct {
	ID     ID       `json:"id"`
	Scope  ID       `json:"scope"`
	TTL    int64    `json:"ttl,omitempty"`
	Opened int64    `json:"opened"`
	Token  []byte   `json:"token"`
	Mem    []MemRec `json:"mem,omitempty"`
}

// MemRec is one remembered request id.
type MemRec struct {
	Request string `json:"req"`
	Hash    uint64 `json:"hash"`
	Result  ID     `json:"result,omitempty"`
	// Answer is a consume's first answer; absent in records written
	// before answers were kept.
	Answer *Tightest `json:"answer,omitempty"`
	// At is the engine's time of the call, unix nanoseconds; 0 in records
	// written before ids were kept for RequestWindow, which keep only the
	// most recent RequestMemory of them.
	At int64 `json:"at,omitempty"`
}

// LeaseRec is a live lease.
type LeaseRec struct {
	ID      ID     `json:"id"`
	Node    ID     `json:"node"`
	Session ID     `json:"session"`
	Class   string `json:"class"`
	Granted int64  `json:"granted"`
	Until   int64  `json:"until,omitempty"`
}

// TombRec is an ended lease still remembered.
type TombRec struct {
	ID      ID      `json:"id"`
	Node    ID      `json:"node"`
	Session ID      `json:"session"`
	Class   string  `json:"class"`
	Outcome Outcome `json:"outcome"`
	Ended   int64   `json:"ended"`
	Until   int64   `json:"until"`
}

func (n *node) record() NodeRec {
	r := NodeRec{
		ID: n.id, Name: n.name, State: n.state, Created: n.created, Ended: n.ended,
		Deadline: n.deadline, Weight: n.weight, Priority: n.priority, Defaults: cloneDefaults(*n.defs()),
		Retention: n.retention, Keyed: n.keyed, KeyRes: n.keyRes, Owner: n.owner, OwnerEnded: n.ownerEnded,
	}
	if n.state == Active {
		if _, at, _, own := n.doomOf(); own { // a mark by its owner's end (see orphans.go)
			r.Ended = at
		}
	}
	if n.parent != nil {
		r.Parent = n.parent.id
	}
	if n.res.len() > 0 {
		r.Res = make(map[string]*ResRec, n.res.len())
		for k, rs := range n.res.all() {
			rr := &ResRec{Capped: rs.capped, Cap: rs.cap, Used: rs.used, Own: rs.own, Settled: rs.settled, Top: rs.top}
			if rs.rate != nil {
				rr.Rate = rs.rate.record()
			}
			r.Res[k] = rr
		}
	}
	for k, cs := range n.cls {
		if !cs.limited && cs.held == 0 {
			continue // only a queue passed through: nothing to keep
		}
		if r.Cls == nil {
			r.Cls = make(map[string]ClassRec, len(n.cls))
		}
		r.Cls[k] = ClassRec{Limited: cs.limited, Limit: cs.limit, Held: cs.held}
	}
	return r
}

func cloneDefaults(d Defaults) Defaults {
	out := Defaults{Caps: d.Caps.clone()}
	if d.Children != nil {
		ch := d.Children.clone()
		out.Children = &ch
	}
	return out
}

func (s *session) record() SessionRec {
	r := SessionRec{ID: s.id, Scope: s.scope.id, TTL: s.ttl, Opened: s.opened, Token: append([]byte(nil), s.token[:]...)}
	for _, m := range s.mem.entries() {
		r.Mem = append(r.Mem, MemRec{Request: m.req, Hash: m.hash, Result: m.result, Answer: m.answer, At: m.at})
	}
	return r
}

func (l *lease) record() LeaseRec {
	return LeaseRec{ID: l.id, Node: l.node.id, Session: l.session.id, Class: l.class, Granted: l.granted, Until: l.until}
}

func (t *tombstone) record() TombRec {
	return TombRec{ID: t.id, Node: t.node, Session: t.session, Class: t.class, Outcome: t.outcome, Ended: t.ended, Until: t.until}
}

// Encode returns the snapshot's stored form: its binary encoding (see
// docs/record.md).
func (st *Snapshot) Encode() ([]byte, error) {
	b := appendSnapshotHead(make([]byte, 0, 64+64*len(st.Nodes)), st.Seq, st.Time, st.Next, &st.Settings)
	for i := range st.Nodes {
		b = appendNodeRec(b, &st.Nodes[i])
	}
	for i := range st.Sessions {
		b = appendSessionRec(b, &st.Sessions[i])
	}
	for i := range st.Leases {
		b = appendLeaseRec(b, &st.Leases[i])
	}
	for i := range st.Tombs {
		b = appendTombRec(b, &st.Tombs[i])
	}
	return b, nil
}

// DecodeSnapshot parses a snapshot's stored form, binary or (as records
// written before the binary form were) JSON. Restore checks that it forms a
// valid tree.
func DecodeSnapshot(data []byte) (*Snapshot, error) {
	return decodeForm(data, "snapshot", decodeSnapshot)
}

// sort puts every list in id order, so equal states encode equally.
func (st *Snapshot) sort() {
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].ID < st.Nodes[j].ID })
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].ID < st.Sessions[j].ID })
	sort.Slice(st.Leases, func(i, j int) bool { return st.Leases[i].ID < st.Leases[j].ID })
	sort.Slice(st.Tombs, func(i, j int) bool { return st.Tombs[i].ID < st.Tombs[j].ID })
}
