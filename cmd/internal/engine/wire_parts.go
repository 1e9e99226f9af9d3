package engine

import (
	"math"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The binary form of the parts that events and snapshots share. Each pair
// writes and reads one message; docs/record.md lists the field numbers.

func (e *enc) rate(r *Rate) {
	e.int(1, r.Limit)
	e.int(2, int64(r.Period))
	e.int(3, r.Burst)
	e.uint(4, uint64(r.Algorithm))
	e.uint(5, uint64(r.Calendar))
	e.str(6, r.Zone)
}

func (d *dec) rate(msg []byte) (r Rate) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			r.Limit = d.int(f)
		case 2:
			r.Period = time.Duration(d.int(f))
		case 3:
			r.Burst = d.int(f)
		case 4:
			r.Algorithm = Algorithm(d.small(f))
		case 5:
			r.Calendar = Calendar(d.small(f))
		case 6:
			r.Zone = d.str(f)
		}
	})
	return r
}

// caps writes a set of caps as fields first (quotas), first+1 (limits) and
// first+2 (rates) of the message being written.
func (e *enc) caps(first protowire.Number, c *Caps) {
	e.int64s(first, c.Quotas)
	e.int64s(first+1, c.Limits)
	entries(e, first+2, c.Rates, func(r Rate) { e.msg(2, func() { e.rate(&r) }) })
}

// capsField reads field f into c if it is one of the fields caps(first, c)
// writes, and says whether it was.
func (d *dec) capsField(f field, first protowire.Number, c *Caps) bool {
	switch f.num {
	case first:
		entry(d, f, &c.Quotas, d.int)
	case first + 1:
		entry(d, f, &c.Limits, d.int)
	case first + 2:
		entry(d, f, &c.Rates, func(f field) Rate { return d.rate(d.msg(f)) })
	default:
		return false
	}
	return true
}

func (d *dec) capsMsg(msg []byte) (c Caps) {
	d.fields(msg, func(f field) { d.capsField(f, 1, &c) })
	return c
}

func (e *enc) defaults(df *Defaults) {
	e.caps(1, &df.Caps)
	if df.Children != nil {
		e.msg(4, func() { e.caps(1, df.Children) })
	}
}

func (d *dec) defaults(msg []byte) (df Defaults) {
	d.fields(msg, func(f field) {
		if !d.capsField(f, 1, &df.Caps) && f.num == 4 {
			ch := d.capsMsg(d.msg(f))
			df.Children = &ch
		}
	})
	return df
}

func (e *enc) spec(s *Spec) {
	e.str(1, s.Name)
	e.caps(2, &Caps{Quotas: s.Quotas, Limits: s.Limits, Rates: s.Rates})
	e.int(5, s.Deadline)
	e.int(6, int64(s.Weight))
	e.int(7, int64(s.Priority))
	e.int(8, int64(s.Retention))
	e.uint(9, uint64(s.Keyed))
	e.bool(10, s.Detached)
}

func (d *dec) spec(msg []byte) (s Spec) {
	var c Caps
	d.fields(msg, func(f field) {
		if d.capsField(f, 2, &c) {
			return
		}
		switch f.num {
		case 1:
			s.Name = d.str(f)
		case 5:
			s.Deadline = d.int(f)
		case 6:
			s.Weight = d.int32(f)
		case 7:
			s.Priority = d.int32(f)
		case 8:
			s.Retention = time.Duration(d.int(f))
		case 9:
			s.Keyed = Keyed(d.small(f))
		case 10:
			s.Detached = d.bool(f)
		}
	})
	s.Quotas, s.Limits, s.Rates = c.Quotas, c.Limits, c.Rates
	return s
}

func (e *enc) settings(s *Settings) {
	e.int(1, int64(s.TombstoneTTL))
	e.int(2, int64(s.NodeRetention))
	e.int(3, int64(s.MaxScheduleWait))
	e.int(4, int64(s.KeyIdle))
}

func (d *dec) settings(msg []byte) (s Settings) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			s.TombstoneTTL = time.Duration(d.int(f))
		case 2:
			s.NodeRetention = time.Duration(d.int(f))
		case 3:
			s.MaxScheduleWait = time.Duration(d.int(f))
		case 4:
			s.KeyIdle = time.Duration(d.int(f))
		}
	})
	return s
}

func (e *enc) tightest(t *Tightest) {
	e.bool(1, t.Capped)
	e.uint(2, uint64(t.Node))
	e.bool(3, t.Rate)
	e.int(4, t.Limit)
	e.int(5, t.Remaining)
	e.int(6, t.Reset)
}

func (d *dec) tightest(msg []byte) *Tightest {
	t := new(Tightest)
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			t.Capped = d.bool(f)
		case 2:
			t.Node = ID(d.uint(f))
		case 3:
			t.Rate = d.bool(f)
		case 4:
			t.Limit = d.int(f)
		case 5:
			t.Remaining = d.int(f)
		case 6:
			t.Reset = d.int(f)
		}
	})
	return t
}

func (e *enc) adapt(a *Adapt) {
	e.int(1, int64(a.Samples))
	e.int(2, a.P95Nanos)
	e.fixed(3, math.Float64bits(a.OverloadShare))
	e.str(4, a.Reason)
}

func (d *dec) adapt(msg []byte) *Adapt {
	a := new(Adapt)
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			a.Samples = int(d.int(f))
		case 2:
			a.P95Nanos = d.int(f)
		case 3:
			a.OverloadShare = math.Float64frombits(d.fixed(f))
		case 4:
			a.Reason = d.str(f)
		}
	})
	return a
}

func (e *enc) charge(c *Charge) {
	e.str(1, c.Resource)
	e.int(2, c.Amount)
}

func (d *dec) charge(msg []byte) *Charge {
	c := new(Charge)
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			c.Resource = d.str(f)
		case 2:
			c.Amount = d.int(f)
		}
	})
	return c
}

func (e *enc) report(r *Report) {
	e.int(1, r.LatencyNanos)
	e.bool(2, r.Overloaded)
}

func (d *dec) report(msg []byte) (r Report) {
	d.fields(msg, func(f field) {
		switch f.num {
		case 1:
			r.LatencyNanos = d.int(f)
		case 2:
			r.Overloaded = d.bool(f)
		}
	})
	return r
}
