package cluster

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"governor.dev/governor/cmd/internal/engine"
)

// field is one field read from a message.
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64
	b   []byte
}

// reader reads protobuf fields; its first error sticks.
type reader struct{ err error }

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = errCorrupt(format, args...)
	}
}

// fields calls f with each field of msg, in order, and skips groups.
func (r *reader) fields(msg []byte, f func(fl field)) {
	if r.err != nil {
		return
	}
	err := engine.WalkFields(msg, func(num protowire.Number, typ protowire.Type, u uint64, b []byte) bool {
		f(field{num: num, typ: typ, u: u, b: b})
		return r.err == nil
	})
	if err != nil {
		r.fail("%v", err)
	}
}

func (r *reader) want(fl field, typ protowire.Type) bool {
	if fl.typ != typ {
		r.fail("field %d has wire type %d, not %d", fl.num, fl.typ, typ)
		return false
	}
	return true
}

func (r *reader) uint(fl field) uint64 {
	if !r.want(fl, protowire.VarintType) {
		return 0
	}
	return fl.u
}

func (r *reader) int(fl field) int64 { return int64(r.uint(fl)) }

func (r *reader) msg(fl field) []byte {
	if !r.want(fl, protowire.BytesType) {
		return nil
	}
	return fl.b
}

func (r *reader) str(fl field) string { return string(r.msg(fl)) }

// part decodes an embedded message with one of the engine's decoders.
func part[T any](r *reader, fl field, decode func([]byte) (T, error)) T {
	v, err := decode(r.msg(fl))
	if err != nil && r.err == nil {
		r.err = errCorrupt("%v", err)
	}
	return v
}

func (r *reader) packed(fl field) []int64 {
	b := r.msg(fl)
	var out []int64
	for len(b) > 0 && r.err == nil {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			r.fail("bad packed list in field %d: %v", fl.num, protowire.ParseError(n))
			return nil
		}
		out = append(out, int64(v))
		b = b[n:]
	}
	return out
}

// DecodeCommand reads a command's log form. What it cannot read is an
// ErrCorruptCommand error; fields it does not know are skipped.
func DecodeCommand(data []byte) (*Command, error) {
	c := new(Command)
	r := &reader{}
	r.fields(data, func(fl field) { r.command(fl, c) })
	if r.err != nil {
		return nil, r.err
	}
	if c.Op == 0 || c.Op >= opEnd {
		return nil, errCorrupt("unknown op %d", c.Op)
	}
	return c, nil
}

func (r *reader) command(fl field, c *Command) {
	switch fl.num {
	case fOp:
		c.Op = Op(min(r.uint(fl), uint64(opEnd)))
	case fNow:
		c.Now = r.int(fl)
	case fSession:
		c.Session = engine.ID(r.uint(fl))
	case fRequest:
		c.Request = r.str(fl)
	case fTarget:
		c.Target = engine.ID(r.uint(fl))
	case fName:
		c.Name = r.str(fl)
	case fAmount:
		c.Amount = r.int(fl)
	case fValue:
		v := r.int(fl)
		c.Value = &v
	case fSpan:
		c.Span = span(r.uint(fl))
	case fToken:
		if b := r.msg(fl); len(b) == len(c.Token) {
			copy(c.Token[:], b)
		} else {
			r.fail("token of %d bytes, not %d", len(b), len(c.Token))
		}
	case fRenew:
		for _, v := range r.packed(fl) {
			c.Renew = append(c.Renew, engine.ID(v))
		}
	case fWaiter:
		c.Waiter = r.uint(fl)
	case fSum:
		if r.want(fl, protowire.Fixed64Type) {
			c.Sum = fl.u
		}
	case fBatch:
		r.batched(fl, c)
	case fAPI:
		c.API = r.str(fl)
	default:
		r.commandPart(fl, c)
	}
}

// batched reads one command of a batch; it must be batchable (which keeps
// batches from nesting).
func (r *reader) batched(fl field, c *Command) {
	sub, err := DecodeCommand(r.msg(fl))
	switch {
	case err != nil:
		if r.err == nil {
			r.err = fmt.Errorf("command %d of a batch: %w", len(c.Batch)+1, err)
		}
	case !batchable(sub.Op):
		r.fail("command %d of a batch is a %v; a batch holds only consumes", len(c.Batch)+1, sub.Op)
	default:
		c.Batch = append(c.Batch, sub)
	}
}

func (r *reader) commandPart(fl field, c *Command) {
	switch fl.num {
	case fSpec:
		s := part(r, fl, engine.DecodeSpec)
		c.Spec = &s
	case fCharge:
		c.Charge = new(engine.Charge)
		r.fields(r.msg(fl), func(f field) {
			switch f.num {
			case 1:
				c.Charge.Resource = r.str(f)
			case 2:
				c.Charge.Amount = r.int(f)
			}
		})
	case fOptions:
		r.fields(r.msg(fl), func(f field) {
			switch f.num {
			case 1:
				c.Options.MaxWait = span(r.uint(f))
			case 2:
				c.Options.Drain = r.uint(f) != 0
			}
		})
	case fKeyed:
		c.Keyed = r.keyed(r.msg(fl))
	case fReport:
		r.fields(r.msg(fl), func(f field) {
			switch f.num {
			case 1:
				c.Report.LatencyNanos = r.int(f)
			case 2:
				c.Report.Overloaded = r.uint(f) != 0
			}
		})
	default:
		r.commandCaps(fl, c)
	}
}

func (r *reader) commandCaps(fl field, c *Command) {
	switch fl.num {
	case fAdapt:
		c.Adapt = part(r, fl, engine.DecodeAdapt)
	case fDefaults:
		d := part(r, fl, engine.DecodeDefaults)
		c.Defaults = &d
	case fRate:
		rt := part(r, fl, engine.DecodeRate)
		c.Rate = &rt
	case fSettings:
		s := part(r, fl, engine.DecodeSettings)
		c.Settings = &s
	case fBounds:
		c.Bounds = r.bounds(r.msg(fl))
	}
}

func (r *reader) keyed(msg []byte) *engine.KeyedLimit {
	k := new(engine.KeyedLimit)
	r.fields(msg, func(f field) {
		switch f.num {
		case 1:
			k.Parent = engine.ID(r.uint(f))
		case 2:
			k.Group = r.str(f)
		case 3:
			k.Key = r.str(f)
		case 4:
			k.Resource = r.str(f)
		case 5:
			k.Rate = part(r, f, engine.DecodeRate)
		case 6:
			k.Reset = r.uint(f) != 0
		}
	})
	return k
}

func (r *reader) bounds(msg []byte) *engine.BoundsConfig {
	cfg := new(engine.BoundsConfig)
	r.fields(msg, func(f field) {
		switch f.num {
		case 1:
			r.limits(f, &cfg.Default)
		case 2:
			var id engine.ID
			var lim engine.Bounds
			r.fields(r.msg(f), func(g field) {
				switch g.num {
				case 1:
					id = engine.ID(r.uint(g))
				case 2:
					r.limits(g, &lim)
				}
			})
			if cfg.PerTenant == nil {
				cfg.PerTenant = make(map[engine.ID]engine.Bounds)
			}
			cfg.PerTenant[id] = lim
		case 3:
			cfg.Declared = append(cfg.Declared, r.str(f))
		}
	})
	return cfg
}

// limits reads a packed list of bounds; a list of another length is
// refused, so a reader never guesses which bound a number is.
func (r *reader) limits(fl field, into *engine.Bounds) {
	vs := r.packed(fl)
	if r.err == nil && len(vs) != len(into) {
		r.fail("bounds list of %d numbers, not %d", len(vs), len(into))
		return
	}
	copy(into[:], vs)
}

func sortedTenants(m map[engine.ID]engine.Bounds) []engine.ID {
	ids := make([]engine.ID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
