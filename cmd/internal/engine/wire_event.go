package engine

import "google.golang.org/protobuf/encoding/protowire"

// appendEvent appends the event's binary form (binaryMark, then its
// message) to b.
func appendEvent(b []byte, ev *Event) []byte {
	e := enc{b: append(b, binaryMark)}
	e.uint(1, ev.Seq)
	e.int(2, ev.Time)
	e.uint(3, uint64(ev.Kind))
	e.uint(4, uint64(ev.Session))
	e.str(5, ev.Request)
	e.fixed(6, ev.ArgHash)
	e.uint(7, uint64(ev.Target))
	e.uint(8, uint64(ev.Node))
	e.str(9, ev.Name)
	e.int(10, ev.Amount)
	if ev.Value != nil {
		e.b = protowire.AppendTag(e.b, 11, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(*ev.Value))
	}
	e.int(12, ev.Until)
	e.uint(13, uint64(ev.State))
	e.int(14, ev.TTL)
	e.bytes(15, ev.Token)
	if ev.Spec != nil {
		e.msg(16, func() { e.spec(ev.Spec) })
	}
	if ev.Charge != nil {
		e.msg(17, func() { e.charge(ev.Charge) })
	}
	if ev.Defaults != nil {
		e.msg(18, func() { e.defaults(ev.Defaults) })
	}
	if ev.Settings != nil {
		e.msg(19, func() { e.settings(ev.Settings) })
	}
	if ev.Rate != nil {
		e.msg(20, func() { e.rate(ev.Rate) })
	}
	if ev.Report != (Report{}) {
		e.msg(21, func() { e.report(&ev.Report) })
	}
	if ev.Adapt != nil {
		e.msg(22, func() { e.adapt(ev.Adapt) })
	}
	e.ids(23, ev.IDs)
	if ev.Answer != nil {
		e.msg(24, func() { e.tightest(ev.Answer) })
	}
	e.uint(25, uint64(ev.Owner))
	return e.b
}

// decodeEvent reads an event's message (after binaryMark).
func decodeEvent(msg []byte) (*Event, error) {
	ev := new(Event)
	d := dec{what: "event"}
	d.fields(msg, func(f field) { d.eventField(f, ev) })
	if d.err != nil {
		return nil, d.err
	}
	return ev, nil
}

func (d *dec) eventField(f field, ev *Event) {
	switch f.num {
	case 1:
		ev.Seq = d.uint(f)
	case 2:
		ev.Time = d.int(f)
	case 3:
		ev.Kind = Kind(d.small(f))
	case 4:
		ev.Session = ID(d.uint(f))
	case 5:
		ev.Request = d.str(f)
	case 6:
		ev.ArgHash = d.fixed(f)
	case 7:
		ev.Target = ID(d.uint(f))
	case 8:
		ev.Node = ID(d.uint(f))
	case 9:
		ev.Name = d.str(f)
	case 10:
		ev.Amount = d.int(f)
	case 11:
		v := d.int(f)
		ev.Value = &v
	case 12:
		ev.Until = d.int(f)
	case 13:
		ev.State = State(d.small(f))
	case 14:
		ev.TTL = d.int(f)
	case 15:
		ev.Token = d.bytes(f)
	default:
		d.eventPart(f, ev)
	}
}

// eventPart reads the event's embedded messages.
func (d *dec) eventPart(f field, ev *Event) {
	switch f.num {
	case 16:
		s := d.spec(d.msg(f))
		ev.Spec = &s
	case 17:
		ev.Charge = d.charge(d.msg(f))
	case 18:
		df := d.defaults(d.msg(f))
		ev.Defaults = &df
	case 19:
		s := d.settings(d.msg(f))
		ev.Settings = &s
	case 20:
		r := d.rate(d.msg(f))
		ev.Rate = &r
	case 21:
		ev.Report = d.report(d.msg(f))
	case 22:
		ev.Adapt = d.adapt(d.msg(f))
	case 23:
		ev.IDs = d.ids(f)
	case 24:
		ev.Answer = d.tightest(d.msg(f))
	case 25:
		ev.Owner = ID(d.uint(f))
	}
}
