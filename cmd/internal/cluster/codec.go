package cluster

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"governor.dev/governor/cmd/internal/engine"
)

// A command's log form is one protobuf message written by hand, as the
// engine writes its events: zero fields are left out, a pointer that is set
// is written even when it points to zero. The parts the engine's record
// already has a form for (spec, defaults, settings, rate, adapt) are written
// in that form. Field numbers are part of the log: never reuse one.
const (
	fOp = iota + 1
	fNow
	fSession
	fRequest
	fTarget
	fName
	fAmount
	fValue
	fSpan
	fToken
	fSpec
	fCharge
	fOptions
	fKeyed
	fReport
	fAdapt
	fDefaults
	fRate
	fSettings
	fBounds
	fRenew
	fWaiter
	fSum
	fBatch
	fAPI
)

type writer struct{ b []byte }

func (w *writer) uint(num protowire.Number, v uint64) {
	if v != 0 {
		w.always(num, v)
	}
}

func (w *writer) always(num protowire.Number, v uint64) {
	w.b = protowire.AppendTag(w.b, num, protowire.VarintType)
	w.b = protowire.AppendVarint(w.b, v)
}

func (w *writer) str(num protowire.Number, s string) {
	if s != "" {
		w.b = protowire.AppendTag(w.b, num, protowire.BytesType)
		w.b = protowire.AppendString(w.b, s)
	}
}

// msg writes the message body appends, whatever its length.
func (w *writer) msg(num protowire.Number, body func([]byte) []byte) {
	w.b = protowire.AppendTag(w.b, num, protowire.BytesType)
	w.b = protowire.AppendBytes(w.b, body(nil))
}

// Encode returns the command's log form.
func (c *Command) Encode() []byte {
	w := &writer{b: make([]byte, 0, 64)}
	w.uint(fOp, uint64(c.Op))
	w.uint(fNow, uint64(c.Now))
	w.uint(fSession, uint64(c.Session))
	w.str(fRequest, c.Request)
	w.uint(fTarget, uint64(c.Target))
	w.str(fName, c.Name)
	w.uint(fAmount, uint64(c.Amount))
	if c.Value != nil {
		w.always(fValue, uint64(*c.Value))
	}
	w.uint(fSpan, uint64(c.Span))
	if c.Token != ([32]byte{}) {
		w.msg(fToken, func(b []byte) []byte { return append(b, c.Token[:]...) })
	}
	c.encodeParts(w)
	if len(c.Renew) > 0 {
		w.msg(fRenew, func(b []byte) []byte {
			for _, id := range c.Renew {
				b = protowire.AppendVarint(b, uint64(id))
			}
			return b
		})
	}
	w.uint(fWaiter, c.Waiter)
	if c.Sum != 0 {
		w.b = protowire.AppendTag(w.b, fSum, protowire.Fixed64Type)
		w.b = protowire.AppendFixed64(w.b, c.Sum)
	}
	for _, sub := range c.Batch {
		w.msg(fBatch, func([]byte) []byte { return sub.Encode() })
	}
	w.str(fAPI, c.API)
	return w.b
}

func (c *Command) encodeParts(w *writer) {
	if c.Spec != nil {
		w.msg(fSpec, func(b []byte) []byte { return engine.AppendSpec(b, c.Spec) })
	}
	if c.Charge != nil {
		w.msg(fCharge, func(b []byte) []byte {
			cw := &writer{b: b}
			cw.str(1, c.Charge.Resource)
			cw.uint(2, uint64(c.Charge.Amount))
			return cw.b
		})
	}
	if c.Options != (engine.ConsumeOptions{}) {
		w.msg(fOptions, func(b []byte) []byte {
			ow := &writer{b: b}
			ow.uint(1, uint64(c.Options.MaxWait))
			ow.uint(2, boolBit(c.Options.Drain))
			return ow.b
		})
	}
	if c.Keyed != nil {
		w.msg(fKeyed, func(b []byte) []byte { return appendKeyed(b, c.Keyed) })
	}
	if c.Report != (engine.Report{}) {
		w.msg(fReport, func(b []byte) []byte {
			rw := &writer{b: b}
			rw.uint(1, uint64(c.Report.LatencyNanos))
			rw.uint(2, boolBit(c.Report.Overloaded))
			return rw.b
		})
	}
	if c.Adapt != (engine.Adapt{}) {
		w.msg(fAdapt, func(b []byte) []byte { return engine.AppendAdapt(b, &c.Adapt) })
	}
	if c.Defaults != nil {
		w.msg(fDefaults, func(b []byte) []byte { return engine.AppendDefaults(b, c.Defaults) })
	}
	if c.Rate != nil {
		w.msg(fRate, func(b []byte) []byte { return engine.AppendRate(b, c.Rate) })
	}
	if c.Settings != nil {
		w.msg(fSettings, func(b []byte) []byte { return engine.AppendSettings(b, c.Settings) })
	}
	if c.Bounds != nil {
		w.msg(fBounds, func(b []byte) []byte { return appendBounds(b, c.Bounds) })
	}
}

func boolBit(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

func appendKeyed(b []byte, k *engine.KeyedLimit) []byte {
	w := &writer{b: b}
	w.uint(1, uint64(k.Parent))
	w.str(2, k.Group)
	w.str(3, k.Key)
	w.str(4, k.Resource)
	w.msg(5, func(b []byte) []byte { return engine.AppendRate(b, &k.Rate) })
	w.uint(6, boolBit(k.Reset))
	return w.b
}

// appendBounds writes the default bounds as a packed list (field 1), each
// tenant's as a message of its id and packed list (field 2), and the
// declared tenant names (field 3).
func appendBounds(b []byte, cfg *engine.BoundsConfig) []byte {
	w := &writer{b: b}
	w.msg(1, func(b []byte) []byte { return appendPacked(b, cfg.Default[:]) })
	for _, id := range sortedTenants(cfg.PerTenant) {
		lim := cfg.PerTenant[id]
		w.msg(2, func(b []byte) []byte {
			tw := &writer{b: b}
			tw.uint(1, uint64(id))
			tw.msg(2, func(b []byte) []byte { return appendPacked(b, lim[:]) })
			return tw.b
		})
	}
	for _, name := range cfg.Declared {
		w.b = protowire.AppendTag(w.b, 3, protowire.BytesType)
		w.b = protowire.AppendString(w.b, name)
	}
	return w.b
}

func appendPacked(b []byte, vs []int64) []byte {
	for _, v := range vs {
		b = protowire.AppendVarint(b, uint64(v))
	}
	return b
}

// errCorrupt says a command's log form could not be read.
func errCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: decode command: %s", ErrCorruptCommand, fmt.Sprintf(format, args...))
}

// span converts a varint to a duration.
func span(v uint64) time.Duration { return time.Duration(int64(v)) }
