package engine

// SetRate sets the rate cap of resource on node id; nil removes it. A change
// carries the bucket's state into the new rate: a leaky bucket in debt keeps
// every booked slot's time, otherwise it keeps the units it lacks, so its
// remaining moves by the change of burst, never below zero; a token bucket
// keeps its window; a change of algorithm, calendar or zone starts full.
// Same scope rule as SetQuota.
func (e *Engine) SetRate(c *Call, id ID, resource string, rate *Rate) error {
	if err := validKey("resource", resource); err != nil {
		return err
	}
	if rate != nil {
		if _, err := validRate("rate", rate); err != nil {
			return err
		}
	}
	if err := validRequest(c); err != nil {
		return err
	}
	h := uint64(newHash(KindRateSet).num(int64(id)).str(resource).rate(rate))
	return e.edit(c, id, h, false, func(n *node) (*Event, error) {
		if err := e.admitNameLocked(n, resource, true); err != nil {
			return nil, err
		}
		ev := &Event{Kind: KindRateSet, Node: n.id, Name: resource}
		if rate != nil {
			r := *rate
			ev.Rate = &r
		}
		return ev, nil
	})
}

// ResetRate makes the rate cap of resource on node id full again and
// forgives its debt: slots booked on it keep their answers, but no longer
// hold back anyone else. Same scope rule as SetQuota.
func (e *Engine) ResetRate(c *Call, id ID, resource string) error {
	if err := validKey("resource", resource); err != nil {
		return err
	}
	if err := validRequest(c); err != nil {
		return err
	}
	h := uint64(newHash(KindRateReset).num(int64(id)).str(resource))
	return e.edit(c, id, h, false, func(n *node) (*Event, error) {
		if rs := n.res.get(resource); rs == nil || rs.rate == nil {
			return nil, invalid("resource", "node %q has no rate cap on %q to reset; set one first", n.name, resource)
		}
		return &Event{Kind: KindRateReset, Node: n.id, Name: resource}, nil
	})
}

func (e *Engine) applyRateSet(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil || validKey("resource", ev.Name) != nil {
		return corrupt("event %d sets a rate on unknown node %d", ev.Seq, ev.Node)
	}
	rs := n.resource(ev.Name)
	e.markNode(n)
	if ev.Rate == nil {
		e.putRate(rs, nil)
		return nil
	}
	loc, err := validRate("rate", ev.Rate)
	if err != nil {
		return corrupt("event %d: %v", ev.Seq, err)
	}
	if rs.rate == nil {
		e.putRate(rs, newBucket(*ev.Rate, loc))
		return nil
	}
	e.putRate(rs, rs.rate.retune(*ev.Rate, loc, ev.Time))
	return nil
}

func (e *Engine) applyRateReset(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil {
		return corrupt("event %d resets a rate on unknown node %d", ev.Seq, ev.Node)
	}
	rs := n.res.get(ev.Name)
	if rs == nil || rs.rate == nil {
		return corrupt("event %d resets a rate node %d does not have", ev.Seq, ev.Node)
	}
	rs.rate.reset()
	e.markNode(n)
	return nil
}

// putRate installs (or, with nil, removes) a resource's rate cap and keeps
// the count of rate caps.
func (e *Engine) putRate(rs *resState, b *bucket) {
	if rs.rate != nil {
		e.rateCaps--
	}
	if b != nil {
		e.rateCaps++
	}
	rs.rate = b
}

// setRatesLocked gives a new node full buckets for the rates it starts with.
// The rates were validated with the spec, so their zones resolve.
func (e *Engine) setRatesLocked(n *node, rates map[string]Rate) error {
	for k, r := range rates {
		loc, err := validRate("rates."+k, &r)
		if err != nil {
			return err
		}
		e.putRate(n.resource(k), newBucket(r, loc))
	}
	return nil
}

// RateInfo is one rate cap on one node, seen at the time of the call.
type RateInfo struct {
	Rate
	Remaining int64 // what it can admit now
	Reset     int64 // unix nanoseconds at which it is full again
	Debt      bool  // slots are booked beyond what it holds
}

func (n *node) rateInfos(now int64) map[string]RateInfo {
	var out map[string]RateInfo
	for r, rs := range n.res.all() {
		b := rs.rate
		if b == nil {
			continue
		}
		if out == nil {
			out = make(map[string]RateInfo)
		}
		_, _, _, left, reset := b.check(now, 0)
		out[r] = RateInfo{Rate: b.Rate, Remaining: left, Reset: reset, Debt: b.inDebt(now)}
	}
	return out
}

// RateRec is a rate cap and its bucket as a snapshot stores it.
type RateRec struct {
	Rate   Rate  `json:"rate"`
	Tat    int64 `json:"tat,omitempty"`
	TatRem int64 `json:"tat_rem,omitempty"`
	Used   int64 `json:"used,omitempty"`
	End    int64 `json:"end,omitempty"`
}

func (b *bucket) record() *RateRec {
	return &RateRec{Rate: b.Rate, Tat: b.tat.ns, TatRem: b.tat.rem, Used: b.used, End: b.end}
}

func restoreBucket(node ID, res string, r *RateRec) (*bucket, error) {
	loc, err := validRate("rate", &r.Rate)
	if err != nil || r.TatRem < 0 || r.TatRem >= r.Rate.Limit || r.Used < 0 || r.End < 0 {
		return nil, corrupt("snapshot node %d has a bad %s rate", node, res)
	}
	b := newBucket(r.Rate, loc)
	b.tat, b.used, b.end = instant{ns: r.Tat, rem: r.TatRem}, r.Used, r.End
	return b, nil
}
