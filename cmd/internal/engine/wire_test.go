package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// sameRecord fails t unless a and b hold the same, an empty map or list
// counting as an absent one: the binary form, as the JSON form did, writes
// neither.
func sameRecord[T any](t *testing.T, what string, a, b *T) {
	t.Helper()
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	dropEmpty(va)
	dropEmpty(vb)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s changed in the binary form:\nwrote %+v\nread  %+v", what, a, b)
	}
}

// dropEmpty sets every empty map and slice reachable from v to nil.
func dropEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		if v.Len() == 0 {
			v.SetZero()
			return
		}
		if v.Kind() == reflect.Slice {
			for i := range v.Len() {
				dropEmpty(v.Index(i))
			}
			return
		}
		for _, k := range v.MapKeys() {
			x := reflect.New(v.Type().Elem()).Elem()
			x.Set(v.MapIndex(k))
			dropEmpty(x)
			v.SetMapIndex(k, x)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			dropEmpty(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			dropEmpty(v.Field(i))
		}
	}
}

// randomValues makes n values of type T with random contents in every
// field: each map and list holds up to three entries, each pointer is set or
// not, at every depth.
func randomValues[T any](r *rand.Rand, n int) []T {
	out := make([]T, n)
	for i := range out {
		fill(r, reflect.ValueOf(&out[i]).Elem())
	}
	return out
}

func fill(r *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.Intn(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(r.Int63() >> r.Intn(63) * int64(1-2*r.Intn(2)))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.Uint64() >> r.Intn(64))
	case reflect.Float64:
		v.SetFloat(r.NormFloat64())
	case reflect.String:
		v.SetString(fmt.Sprint("s", r.Intn(1000), strings.Repeat("é", r.Intn(80))))
	case reflect.Pointer:
		if r.Intn(2) == 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(r, v.Elem())
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), r.Intn(4), 3))
		for i := range v.Len() {
			fill(r, v.Index(i))
		}
	case reflect.Array, reflect.Map:
		fillMap(r, v)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(r, v.Field(i))
		}
	}
}

func fillMap(r *rand.Rand, v reflect.Value) {
	if v.Kind() == reflect.Array {
		for i := range v.Len() {
			fill(r, v.Index(i))
		}
		return
	}
	v.Set(reflect.MakeMap(v.Type()))
	for range r.Intn(4) {
		k, x := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(r, k)
		if x.Kind() == reflect.Pointer { // a snapshot's map holds no nil records
			x.Set(reflect.New(x.Type().Elem()))
			fill(r, x.Elem())
		} else {
			fill(r, x)
		}
		v.SetMapIndex(k, x)
	}
}

// TestEventBinaryRoundTrip encodes events with every field set at random and
// checks that each reads back as it was written.
func TestEventBinaryRoundTrip(t *testing.T) {
	evs := randomValues[Event](rand.New(rand.NewSource(15)), 2000)
	for i := range evs {
		ev := &evs[i]
		data, err := ev.Encode()
		must(t, err)
		if data[0] != binaryMark {
			t.Fatalf("an event encodes starting with %#x, not the binary mark", data[0])
		}
		got, err := decodeEvent(data[1:])
		must(t, err)
		sameRecord(t, "an event", ev, got)
	}
}

// TestSnapshotBinaryRoundTrip does the same for snapshots. Each list of
// records is made on its own, so that the records' maps and pointers are as
// varied as an event's.
func TestSnapshotBinaryRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(15))
	for _, st := range randomValues[Snapshot](r, 200) {
		st.Nodes = randomValues[NodeRec](r, r.Intn(4))
		st.Sessions = randomValues[SessionRec](r, r.Intn(4))
		st.Leases = randomValues[LeaseRec](r, r.Intn(4))
		st.Tombs = randomValues[TombRec](r, r.Intn(4))
		data, err := st.Encode()
		must(t, err)
		got, err := DecodeSnapshot(data)
		must(t, err)
		sameRecord(t, "a snapshot", &st, got)
	}
}

// TestDecodeRefusesUnknownForms checks that bytes that start with neither
// the binary mark nor '{' are refused as corrupt, not guessed at.
func TestDecodeRefusesUnknownForms(t *testing.T) {
	for _, data := range [][]byte{nil, {}, {0x02, 0x08, 0x01}, []byte(" {}"), {0x1f, 0x8b}} {
		if _, err := DecodeEvent(data); !isCorrupt(err) {
			t.Errorf("DecodeEvent(%q) = %v, want a corrupt record", data, err)
		}
		if _, err := DecodeSnapshot(data); !isCorrupt(err) {
			t.Errorf("DecodeSnapshot(%q) = %v, want a corrupt record", data, err)
		}
	}
}

// TestDecodeRefusesWrongWireTypes checks that a known field written with
// another wire type than its own is refused.
func TestDecodeRefusesWrongWireTypes(t *testing.T) {
	// field 1 (seq) as a length-delimited value, then kind 1
	if _, err := DecodeEvent([]byte{binaryMark, 0x0a, 0x01, 0x05, 0x18, 0x01}); !isCorrupt(err) {
		t.Fatalf("an event whose seq is a byte string decoded: %v", err)
	}
	// field 5 (a node) as a varint
	if _, err := DecodeSnapshot([]byte{binaryMark, 0x08, 0x01, 0x28, 0x01}); !isCorrupt(err) {
		t.Fatalf("a snapshot whose node is a number decoded: %v", err)
	}
}

func isCorrupt(err error) bool { return errors.Is(err, ErrCorrupt) }

// TestImageWritesItsSnapshot checks that an image written a record at a time
// is the encoding of its snapshot, byte for byte, in chunks of about
// imageChunk, and that a failing writer's error is returned.
func TestImageWritesItsSnapshot(t *testing.T) {
	e := New(Options{Clock: newFakeClock()})
	c := &Call{}
	for i := range 3000 {
		_, err := e.Create(c, RootID, Spec{Name: fmt.Sprint("n", i), Quotas: map[string]int64{"http": int64(i)}})
		must(t, err)
	}
	im := NewImage(nil)
	im.Apply(e.Capture())
	want, err := im.Snapshot().Encode()
	must(t, err)
	var got chunks
	n, err := im.WriteTo(&got)
	must(t, err)
	if !bytes.Equal(got.Bytes(), want) || n != int64(len(want)) {
		t.Fatalf("WriteTo wrote %d bytes (said %d), not the snapshot's %d-byte encoding", got.Len(), n, len(want))
	}
	if got.writes < len(want)/imageChunk || got.largest > imageChunk+1024 {
		t.Fatalf("WriteTo wrote %d bytes in %d writes of up to %d bytes, want chunks of about %d", len(want), got.writes, got.largest, imageChunk)
	}
	if _, err := im.WriteTo(failingWriter{}); !errors.Is(err, errWriteFailed) {
		t.Fatalf("WriteTo into a failing writer returned %v", err)
	}
}

// chunks is a buffer that counts the writes into it.
type chunks struct {
	bytes.Buffer
	writes, largest int
}

func (c *chunks) Write(p []byte) (int, error) {
	c.writes++
	c.largest = max(c.largest, len(p))
	return c.Buffer.Write(p)
}

var errWriteFailed = errors.New("write failed")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWriteFailed }
