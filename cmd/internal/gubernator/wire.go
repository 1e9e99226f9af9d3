package gubernator

import (
	"iter"
	"maps"
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// The wire forms of GetRateLimitsReq and GetRateLimitsResp, written by hand
// for the gRPC path: decoding into reused structs and encoding without
// reflection cost a call far less than the generated code's general
// machinery. Both give what proto.Unmarshal and proto.Marshal give; a
// differential fuzz test holds them to it.

// Field numbers of RateLimitReq and RateLimitResp.
const (
	reqName      = 1
	reqUniqueKey = 2
	reqHits      = 3
	reqLimit     = 4
	reqDuration  = 5
	reqAlgorithm = 6
	reqBehavior  = 7
	reqBurst     = 8
	reqCreatedAt = 10
	reqMaxWait   = 11

	respStatus     = 1
	respLimit      = 2
	respRemaining  = 3
	respResetTime  = 4
	respError      = 5
	respMetadata   = 6
	respRetryAfter = 7
)

// unmarshalRequest decodes b, a GetRateLimitsReq in protobuf, into m,
// reusing the RateLimitReq structs m already holds. It gives exactly what
// proto.Unmarshal gives, or its error: what the fast path does not take
// (metadata, unknown fields, a field of the wrong wire type, malformed
// data, a string that is not UTF-8) goes to proto.Unmarshal instead.
func unmarshalRequest(b []byte, m *gubernatorv1.GetRateLimitsReq) error {
	if decodeRequest(b, m) {
		return nil
	}
	return proto.Unmarshal(b, m)
}

// decodeRequest is unmarshalRequest's fast path: false when b holds
// something it leaves to proto.Unmarshal (m is then half written).
func decodeRequest(b []byte, m *gubernatorv1.GetRateLimitsReq) bool {
	reqs := m.Requests[:0]
	m.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return false
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		r := next(reqs)
		reqs = append(reqs, r)
		if !decodeOne(v, r) {
			return false
		}
	}
	m.Requests = reqs
	return true
}

// next is the struct for the request after reqs: the one reqs' array
// holds past its end from an earlier call, or a new one. decodeOne empties
// it.
func next(reqs []*gubernatorv1.RateLimitReq) *gubernatorv1.RateLimitReq {
	if len(reqs) < cap(reqs) {
		if r := reqs[:len(reqs)+1][len(reqs)]; r != nil {
			return r
		}
	}
	return &gubernatorv1.RateLimitReq{}
}

// decodeOne empties r and decodes one RateLimitReq into it. A name or key
// equal to the one r held before takes that string again instead of a new
// one: callers repeat names (a few limits, many keys) and often keys.
func decodeOne(b []byte, r *gubernatorv1.RateLimitReq) bool {
	name, key := r.Name, r.UniqueKey
	r.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType && (num == reqName || num == reqUniqueKey):
			v, n := protowire.ConsumeBytes(b)
			if n < 0 || !utf8.Valid(v) {
				return false
			}
			b = b[n:]
			if num == reqName {
				r.Name = text(name, v)
			} else {
				r.UniqueKey = text(key, v)
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 || !setVarint(r, num, v) {
				return false
			}
			b = b[n:]
		default:
			return false
		}
	}
	return true
}

// text is v as a string: old itself when it holds the same bytes, so that
// a repeated name or key costs no allocation.
func text(old string, v []byte) string {
	if old == string(v) {
		return old
	}
	return string(v)
}

// setVarint sets r's varint field num to v; false for a field that is not
// one.
func setVarint(r *gubernatorv1.RateLimitReq, num protowire.Number, v uint64) bool {
	switch num {
	case reqHits:
		r.Hits = int64(v)
	case reqLimit:
		r.Limit = int64(v)
	case reqDuration:
		r.Duration = int64(v)
	case reqAlgorithm:
		r.Algorithm = gubernatorv1.Algorithm(int32(v))
	case reqBehavior:
		r.Behavior = gubernatorv1.Behavior(int32(v))
	case reqBurst:
		r.Burst = int64(v)
	case reqCreatedAt:
		at := int64(v)
		r.CreatedAt = &at
	case reqMaxWait:
		r.MaxWait = int64(v)
	default:
		return false
	}
	return true
}

// appendResponse appends m in protobuf, as proto.Marshal writes it with
// Deterministic set (metadata in key order).
func appendResponse(b []byte, m *gubernatorv1.GetRateLimitsResp) []byte {
	for _, r := range m.Responses {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		at := len(b)
		b = append(b, 0) // the answer's length: one byte while under 128
		b = prefixLength(appendOne(b, r), at)
	}
	return append(b, m.ProtoReflect().GetUnknown()...)
}

// prefixLength writes, at b[at], the length of what follows b[at]: it was
// written with one byte kept for it, and moves when the length takes more.
func prefixLength(b []byte, at int) []byte {
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	extra := protowire.SizeVarint(uint64(n)) - 1
	b = append(b, make([]byte, extra)...)
	copy(b[at+1+extra:], b[at+1:at+1+n])
	protowire.AppendVarint(b[:at], uint64(n))
	return b
}

func appendOne(b []byte, r *gubernatorv1.RateLimitResp) []byte {
	b = appendInt(b, respStatus, uint64(int64(r.Status)))
	b = appendInt(b, respLimit, uint64(r.Limit))
	b = appendInt(b, respRemaining, uint64(r.Remaining))
	b = appendInt(b, respResetTime, uint64(r.ResetTime))
	if r.Error != "" {
		b = protowire.AppendTag(b, respError, protowire.BytesType)
		b = protowire.AppendString(b, r.Error)
	}
	for k, v := range sorted(r.Metadata) {
		b = appendEntry(b, k, v)
	}
	b = appendInt(b, respRetryAfter, uint64(r.RetryAfter))
	return append(b, r.ProtoReflect().GetUnknown()...)
}

// appendInt appends a varint field, unless v is zero (proto3 leaves it
// out). Every such field of RateLimitResp has a one-byte tag.
func appendInt(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// sizeEntry is the length of a map entry's message: key and value, each
// written even when empty, as proto.Marshal writes them.
func sizeEntry(k, v string) int {
	return 2 + protowire.SizeBytes(len(k)) + protowire.SizeBytes(len(v))
}

// appendEntry appends a metadata entry.
func appendEntry(b []byte, k, v string) []byte {
	b = protowire.AppendTag(b, respMetadata, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sizeEntry(k, v)))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, k)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendString(b, v)
}

// sorted yields md's entries in key order. An answer's usual metadata,
// the owner alone, is yielded without a sort or a list of its keys.
func sorted(md map[string]string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if len(md) <= 1 {
			for k, v := range md {
				yield(k, v)
			}
			return
		}
		keys := slices.Sorted(maps.Keys(md))
		for _, k := range keys {
			if !yield(k, md[k]) {
				return
			}
		}
	}
}
