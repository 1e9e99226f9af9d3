package engine

import (
	"encoding/json"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The record's binary form is the protobuf wire format, written and read by
// hand from the engine's own structs: no message is copied into generated
// types first. A stored event or snapshot starts with binaryMark, then one
// message; records written before it are JSON and start with '{'. Field
// numbers are part of the record, listed in docs/record.md: never reuse one.
// A reader skips the fields it does not know, so a field may be added.
const binaryMark byte = 0x01

// decodeForm reads a stored what (an event, a snapshot) in either form:
// binary, through binary (given what follows the mark), or JSON.
func decodeForm[T any](data []byte, what string, binary func([]byte) (*T, error)) (*T, error) {
	switch {
	case len(data) > 0 && data[0] == binaryMark:
		return binary(data[1:])
	case len(data) > 0 && data[0] == '{':
		v := new(T)
		if err := json.Unmarshal(data, v); err != nil {
			return nil, corrupt("decode %s: %v", what, err)
		}
		return v, nil
	}
	return nil, corrupt("decode %s: %d bytes that start with neither the binary mark nor '{'", what, len(data))
}

// enc appends protobuf fields to a buffer. Zero values are left out, as
// proto3 does; a pointer that is set is written even when what it points to
// is zero, so the reader can tell "set to zero" from "not set".
type enc struct{ b []byte }

func (e *enc) uint(num protowire.Number, v uint64) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, v)
	}
}

func (e *enc) int(num protowire.Number, v int64) { e.uint(num, uint64(v)) }

func (e *enc) bool(num protowire.Number, v bool) {
	if v {
		e.uint(num, 1)
	}
}

// fixed writes a value whose bits are spread evenly (a hash, a float): eight
// bytes, where a varint would take ten.
func (e *enc) fixed(num protowire.Number, v uint64) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.Fixed64Type)
		e.b = protowire.AppendFixed64(e.b, v)
	}
}

func (e *enc) str(num protowire.Number, s string) {
	if s != "" {
		e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
		e.b = protowire.AppendString(e.b, s)
	}
}

func (e *enc) bytes(num protowire.Number, p []byte) {
	if len(p) > 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, p)
	}
}

// ids writes a packed list of ids.
func (e *enc) ids(num protowire.Number, ids []ID) {
	if len(ids) == 0 {
		return
	}
	e.msg(num, func() {
		for _, id := range ids {
			e.b = protowire.AppendVarint(e.b, uint64(id))
		}
	})
}

// msg writes the fields body appends as one embedded message. The length
// goes before the body; one byte is reserved for it and the body is moved
// when its length needs more.
func (e *enc) msg(num protowire.Number, body func()) {
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	start := len(e.b)
	e.b = append(e.b, 0)
	body()
	n := len(e.b) - start - 1
	if size := protowire.SizeVarint(uint64(n)); size > 1 {
		e.b = append(e.b, make([]byte, size-1)...)
		copy(e.b[start+size:], e.b[start+1:start+1+n])
	}
	protowire.AppendVarint(e.b[:start], uint64(n))
}

// entries writes a map as repeated key/value messages (as protobuf writes a
// map field), in key order so that equal maps encode equally.
func entries[V any](e *enc, num protowire.Number, m map[string]V, value func(v V)) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.msg(num, func() {
			e.str(1, k)
			value(m[k])
		})
	}
}

func (e *enc) int64s(num protowire.Number, m map[string]int64) {
	entries(e, num, m, func(v int64) { e.int(2, v) })
}

// field is one field read from a message.
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64 // a varint or fixed64 value
	b   []byte // a length-delimited value
}

// dec reads protobuf fields. Its first error sticks: later reads return
// zero values, and err says what was wrong.
type dec struct {
	err  error
	what string            // what is being decoded, for errors
	keys map[string]string // map keys read so far: a tree repeats few of them
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = corrupt("decode "+d.what+": "+format, args...)
	}
}

// fields calls f with each field of msg, in order.
func (d *dec) fields(msg []byte, f func(fl field)) {
	if d.err != nil {
		return
	}
	err := WalkFields(msg, func(num protowire.Number, typ protowire.Type, u uint64, b []byte) bool {
		f(field{num: num, typ: typ, u: u, b: b})
		return d.err == nil
	})
	if err != nil {
		d.fail("%v", err)
	}
}

func (d *dec) want(fl field, typ protowire.Type) bool {
	if fl.typ != typ {
		d.fail("field %d has wire type %d, not %d", fl.num, fl.typ, typ)
		return false
	}
	return true
}

func (d *dec) uint(fl field) uint64 {
	if !d.want(fl, protowire.VarintType) {
		return 0
	}
	return fl.u
}

func (d *dec) int(fl field) int64 { return int64(d.uint(fl)) }

func (d *dec) int32(fl field) int32 {
	v := d.int(fl)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("field %d holds %d, beyond 32 bits", fl.num, v)
	}
	return int32(v)
}

func (d *dec) small(fl field) uint8 {
	v := d.uint(fl)
	if v > math.MaxUint8 {
		d.fail("field %d holds %d, beyond 8 bits", fl.num, v)
	}
	return uint8(v)
}

func (d *dec) bool(fl field) bool { return d.uint(fl) != 0 }

func (d *dec) fixed(fl field) uint64 {
	if !d.want(fl, protowire.Fixed64Type) {
		return 0
	}
	return fl.u
}

func (d *dec) msg(fl field) []byte {
	if !d.want(fl, protowire.BytesType) {
		return nil
	}
	return fl.b
}

func (d *dec) str(fl field) string { return string(d.msg(fl)) }

func (d *dec) bytes(fl field) []byte { return append([]byte(nil), d.msg(fl)...) }

// key reads a map key, sharing the string with earlier equal keys.
func (d *dec) key(fl field) string {
	b := d.msg(fl)
	if s, ok := d.keys[string(b)]; ok {
		return s
	}
	if d.keys == nil {
		d.keys = make(map[string]string)
	}
	s := string(b)
	if len(d.keys) < 1024 {
		d.keys[s] = s
	}
	return s
}

func (d *dec) ids(fl field) []ID {
	b := d.msg(fl)
	var out []ID
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			d.fail("bad id list: %v", protowire.ParseError(n))
			return nil
		}
		out = append(out, ID(v))
		b = b[n:]
	}
	return out
}

// entry reads one key/value message of a map field into m, creating it.
func entry[V any](d *dec, fl field, m *map[string]V, value func(fl field) V) {
	var k string
	var v V
	d.fields(d.msg(fl), func(f field) {
		switch f.num {
		case 1:
			k = d.key(f)
		case 2:
			v = value(f)
		}
	})
	if *m == nil {
		*m = make(map[string]V)
	}
	(*m)[k] = v
}
