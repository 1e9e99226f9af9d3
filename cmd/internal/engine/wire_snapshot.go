package engine

// A binary snapshot is binaryMark, then one message: its head (fields 1 to
// 4), then one field per record (5: node, 6: session, 7: lease, 8:
// tombstone) in id order. Each record is a field of its own, so a snapshot
// can be written a record at a time.

// appendSnapshotHead appends binaryMark and a snapshot's head.
func appendSnapshotHead(b []byte, seq uint64, time int64, next ID, set *Settings) []byte {
	e := enc{b: append(b, binaryMark)}
	e.uint(1, seq)
	e.int(2, time)
	e.uint(3, uint64(next))
	e.msg(4, func() { e.settings(set) })
	return e.b
}

func appendNodeRec(b []byte, r *NodeRec) []byte {
	e := enc{b: b}
	e.msg(5, func() {
		e.uint(1, uint64(r.ID))
		e.uint(2, uint64(r.Parent))
		e.str(3, r.Name)
		e.uint(4, uint64(r.State))
		e.int(5, r.Created)
		e.int(6, r.Ended)
		e.int(7, r.Deadline)
		e.int(8, int64(r.Weight))
		e.int(9, int64(r.Priority))
		entries(&e, 10, r.Res, func(v *ResRec) { e.msg(2, func() { e.resRec(v) }) })
		entries(&e, 11, r.Cls, func(v ClassRec) {
			e.msg(2, func() {
				e.bool(1, v.Limited)
				e.int(2, v.Limit)
				e.int(3, v.Held)
			})
		})
		if d := &r.Defaults; len(d.Quotas) > 0 || len(d.Limits) > 0 || len(d.Rates) > 0 || d.Children != nil {
			e.msg(12, func() { e.defaults(d) })
		}
		e.int(13, r.Retention)
		e.uint(14, uint64(r.Keyed))
		e.str(15, r.KeyRes)
		e.uint(16, uint64(r.Owner))
		e.bool(17, r.OwnerEnded)
	})
	return e.b
}

func (e *enc) resRec(r *ResRec) {
	e.bool(1, r.Capped)
	e.int(2, r.Cap)
	e.int(3, r.Used)
	e.int(4, r.Own)
	e.int(5, r.Settled)
	if r.Top != (Consumer{}) {
		e.msg(6, func() {
			e.uint(1, uint64(r.Top.Node))
			e.str(2, r.Top.Name)
			e.int(3, r.Top.Used)
		})
	}
	if r.Rate != nil {
		e.msg(7, func() {
			e.msg(1, func() { e.rate(&r.Rate.Rate) })
			e.int(2, r.Rate.Tat)
			e.int(3, r.Rate.TatRem)
			e.int(4, r.Rate.Used)
			e.int(5, r.Rate.End)
		})
	}
}

func appendSessionRec(b []byte, r *SessionRec) []byte {
	e := enc{b: b}
	e.msg(6, func() {
		e.uint(1, uint64(r.ID))
		e.uint(2, uint64(r.Scope))
		e.int(3, r.TTL)
		e.int(4, r.Opened)
		e.bytes(5, r.Token)
		for i := range r.Mem {
			m := &r.Mem[i]
			e.msg(6, func() {
				e.str(1, m.Request)
				e.fixed(2, m.Hash)
				e.uint(3, uint64(m.Result))
				if m.Answer != nil {
					e.msg(4, func() { e.tightest(m.Answer) })
				}
				e.int(5, m.At)
			})
		}
	})
	return e.b
}

func appendLeaseRec(b []byte, r *LeaseRec) []byte {
	e := enc{b: b}
	e.msg(7, func() {
		e.holder(r.ID, r.Node, r.Session, r.Class)
		e.int(5, r.Granted)
		e.int(6, r.Until)
	})
	return e.b
}

func appendTombRec(b []byte, r *TombRec) []byte {
	e := enc{b: b}
	e.msg(8, func() {
		e.holder(r.ID, r.Node, r.Session, r.Class)
		e.uint(5, uint64(r.Outcome))
		e.int(6, r.Ended)
		e.int(7, r.Until)
	})
	return e.b
}

// decodeSnapshot reads a snapshot's message (after binaryMark).
func decodeSnapshot(msg []byte) (*Snapshot, error) {
	st := new(Snapshot)
	d := dec{what: "snapshot"}
	var n [9]int // records of each field number, counted first so that each list is made once
	d.fields(msg, func(f field) { n[min(int(f.num), 8)]++ })
	st.Nodes, st.Sessions, st.Leases, st.Tombs = list[NodeRec](n[5]), list[SessionRec](n[6]), list[LeaseRec](n[7]), list[TombRec](n[8])
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			st.Seq = d.uint(f)
		case 2:
			st.Time = d.int(f)
		case 3:
			st.Next = ID(d.uint(f))
		case 4:
			st.Settings = d.settings(d.msg(f))
		case 5:
			st.Nodes = append(st.Nodes, d.nodeRec(d.msg(f)))
		case 6:
			st.Sessions = append(st.Sessions, d.sessionRec(d.msg(f)))
		case 7:
			st.Leases = append(st.Leases, d.leaseRec(d.msg(f)))
		case 8:
			st.Tombs = append(st.Tombs, d.tombRec(d.msg(f)))
		}
	})
	if d.err != nil {
		return nil, d.err
	}
	return st, nil
}

// list makes an empty list with room for n records; nil for none, as a
// snapshot without such records has.
func list[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, 0, n)
}

func (d *dec) nodeRec(msg []byte) (r NodeRec) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			r.ID = ID(d.uint(f))
		case 2:
			r.Parent = ID(d.uint(f))
		case 3:
			r.Name = d.str(f)
		case 4:
			r.State = State(d.small(f))
		case 5:
			r.Created = d.int(f)
		case 6:
			r.Ended = d.int(f)
		case 7:
			r.Deadline = d.int(f)
		case 8:
			r.Weight = d.int32(f)
		case 9:
			r.Priority = d.int32(f)
		default:
			d.nodePart(f, &r)
		}
	})
	return r
}

func (d *dec) nodePart(f field, r *NodeRec) {
	switch f.num {
	case 10:
		entry(d, f, &r.Res, func(f field) *ResRec { rr := d.resRec(d.msg(f)); return &rr })
	case 11:
		entry(d, f, &r.Cls, func(f field) ClassRec { return d.classRec(d.msg(f)) })
	case 12:
		r.Defaults = d.defaults(d.msg(f))
	case 13:
		r.Retention = d.int(f)
	case 14:
		r.Keyed = Keyed(d.small(f))
	case 15:
		r.KeyRes = d.key(f)
	case 16:
		r.Owner = ID(d.uint(f))
	case 17:
		r.OwnerEnded = d.bool(f)
	}
}

func (d *dec) classRec(msg []byte) (c ClassRec) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			c.Limited = d.bool(f)
		case 2:
			c.Limit = d.int(f)
		case 3:
			c.Held = d.int(f)
		}
	})
	return c
}

func (d *dec) resRec(msg []byte) (r ResRec) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			r.Capped = d.bool(f)
		case 2:
			r.Cap = d.int(f)
		case 3:
			r.Used = d.int(f)
		case 4:
			r.Own = d.int(f)
		case 5:
			r.Settled = d.int(f)
		case 6:
			r.Top = d.consumer(d.msg(f))
		case 7:
			r.Rate = d.rateRec(d.msg(f))
		}
	})
	return r
}

func (d *dec) consumer(msg []byte) (c Consumer) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			c.Node = ID(d.uint(f))
		case 2:
			c.Name = d.str(f)
		case 3:
			c.Used = d.int(f)
		}
	})
	return c
}

func (d *dec) rateRec(msg []byte) *RateRec {
	r := new(RateRec)
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			r.Rate = d.rate(d.msg(f))
		case 2:
			r.Tat = d.int(f)
		case 3:
			r.TatRem = d.int(f)
		case 4:
			r.Used = d.int(f)
		case 5:
			r.End = d.int(f)
		}
	})
	return r
}

func (d *dec) sessionRec(msg []byte) (r SessionRec) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			r.ID = ID(d.uint(f))
		case 2:
			r.Scope = ID(d.uint(f))
		case 3:
			r.TTL = d.int(f)
		case 4:
			r.Opened = d.int(f)
		case 5:
			r.Token = d.bytes(f)
		case 6:
			r.Mem = append(r.Mem, d.memRec(d.msg(f)))
		}
	})
	return r
}

func (d *dec) memRec(msg []byte) (m MemRec) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			m.Request = d.str(f)
		case 2:
			m.Hash = d.fixed(f)
		case 3:
			m.Result = ID(d.uint(f))
		case 4:
			m.Answer = d.tightest(d.msg(f))
		case 5:
			m.At = d.int(f)
		}
	})
	return m
}

// holder writes what a lease and its tombstone share: fields 1 to 4.
func (e *enc) holder(id, node, session ID, class string) {
	e.uint(1, uint64(id))
	e.uint(2, uint64(node))
	e.uint(3, uint64(session))
	e.str(4, class)
}

// holder reads field f if it is one of those enc.holder writes, and says
// whether it was.
func (d *dec) holder(f field, id, node, session *ID, class *string) bool {
	switch f.num {
	case 1:
		*id = ID(d.uint(f))
	case 2:
		*node = ID(d.uint(f))
	case 3:
		*session = ID(d.uint(f))
	case 4:
		*class = d.key(f)
	default:
		return false
	}
	return true
}

func (d *dec) leaseRec(msg []byte) (r LeaseRec) {
	d.fields(msg, func(f field) {
		if d.holder(f, &r.ID, &r.Node, &r.Session, &r.Class) {
			return
		}
		switch f.num {
		case 5:
			r.Granted = d.int(f)
		case 6:
			r.Until = d.int(f)
		}
	})
	return r
}

func (d *dec) tombRec(msg []byte) (r TombRec) {
	d.fields(msg, func(f field) {
		if d.holder(f, &r.ID, &r.Node, &r.Session, &r.Class) {
			return
		}
		switch f.num {
		case 5:
			r.Outcome = Outcome(d.small(f))
		case 6:
			r.Ended = d.int(f)
		case 7:
			r.Until = d.int(f)
		}
	})
	return r
}
