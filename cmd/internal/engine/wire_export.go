package engine

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The binary form of the parts a call carries, for a package that records
// calls rather than events (the replicated log): the same messages and field
// numbers as in events and snapshots. Each Decode refuses what it cannot
// read with an ErrCorrupt error.

// AppendSpec appends s as one message body to b.
func AppendSpec(b []byte, s *Spec) []byte { return appendPart(b, s, (*enc).spec) }

// DecodeSpec reads what AppendSpec wrote.
func DecodeSpec(msg []byte) (Spec, error) { return decodePart(msg, "spec", (*dec).spec) }

// AppendDefaults appends df as one message body to b.
func AppendDefaults(b []byte, df *Defaults) []byte { return appendPart(b, df, (*enc).defaults) }

// DecodeDefaults reads what AppendDefaults wrote.
func DecodeDefaults(msg []byte) (Defaults, error) {
	return decodePart(msg, "defaults", (*dec).defaults)
}

// AppendSettings appends s as one message body to b.
func AppendSettings(b []byte, s *Settings) []byte { return appendPart(b, s, (*enc).settings) }

// DecodeSettings reads what AppendSettings wrote.
func DecodeSettings(msg []byte) (Settings, error) {
	return decodePart(msg, "settings", (*dec).settings)
}

// AppendRate appends r as one message body to b.
func AppendRate(b []byte, r *Rate) []byte { return appendPart(b, r, (*enc).rate) }

// DecodeRate reads what AppendRate wrote.
func DecodeRate(msg []byte) (Rate, error) { return decodePart(msg, "rate", (*dec).rate) }

// AppendAdapt appends a as one message body to b.
func AppendAdapt(b []byte, a *Adapt) []byte { return appendPart(b, a, (*enc).adapt) }

// DecodeAdapt reads what AppendAdapt wrote.
func DecodeAdapt(msg []byte) (Adapt, error) {
	a, err := decodePart(msg, "adapt", (*dec).adapt)
	if err != nil {
		return Adapt{}, err
	}
	return *a, nil
}

func appendPart[T any](b []byte, v *T, write func(*enc, *T)) []byte {
	e := enc{b: b}
	write(&e, v)
	return e.b
}

func decodePart[T any](msg []byte, what string, read func(*dec, []byte) T) (T, error) {
	d := dec{what: what}
	v := read(&d, msg)
	if d.err != nil {
		var zero T
		return zero, d.err
	}
	return v, nil
}

// WalkFields calls f with each field of msg, in order: its number, its wire
// type, the value of a varint or fixed64 field in u, the body of a bytes
// field in b (groups and fixed32 fields are skipped over, with neither). It
// stops when f returns false, and refuses a tag or a value it cannot read
// with an error naming it.
func WalkFields(msg []byte, f func(num protowire.Number, typ protowire.Type, u uint64, b []byte) bool) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return fmt.Errorf("bad field tag: %v", protowire.ParseError(n))
		}
		msg = msg[n:]
		var (
			u uint64
			b []byte
		)
		switch typ {
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(msg)
		case protowire.Fixed64Type:
			u, n = protowire.ConsumeFixed64(msg)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return fmt.Errorf("bad field %d: %v", num, protowire.ParseError(n))
		}
		msg = msg[n:]
		if !f(num, typ, u, b) {
			return nil
		}
	}
	return nil
}
