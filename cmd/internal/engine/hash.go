package engine

import (
	"encoding/binary"
	"sort"
)

// argHash fingerprints a call's arguments, so that a request id reused with
// other arguments is caught. FNV-1a, 64 bits.
type argHash uint64

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func newHash(k Kind) argHash { return argHash(fnvOffset).byte(byte(k)) }

func (h argHash) byte(b byte) argHash { return (h ^ argHash(b)) * fnvPrime }

func (h argHash) str(s string) argHash {
	for i := 0; i < len(s); i++ {
		h = h.byte(s[i])
	}
	return h.byte(0xff)
}

func (h argHash) num(v int64) argHash {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	for _, c := range b {
		h = h.byte(c)
	}
	return h
}

func (h argHash) caps(m map[string]int64) argHash {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h = h.num(int64(len(keys)))
	for _, k := range keys {
		h = h.str(k).num(m[k])
	}
	return h
}

func (h argHash) spec(s *Spec) argHash {
	h = h.str(s.Name).caps(s.Quotas).caps(s.Limits).num(s.Deadline).num(int64(s.Weight)).num(int64(s.Priority)).rates(s.Rates)
	if s.Retention != 0 { // left out when unset, so the hashes recorded before it existed still match
		h = h.byte('r').num(int64(s.Retention))
	}
	if s.Detached { // likewise
		h = h.byte('d')
	}
	return h
}

func (h argHash) opt(v *int64) argHash {
	if v == nil {
		return h.byte(0)
	}
	return h.byte(1).num(*v)
}

func (h argHash) defaults(d *Defaults) argHash {
	h = h.caps(d.Quotas).caps(d.Limits).rates(d.Rates)
	if d.Children == nil {
		return h.byte(0)
	}
	return h.byte(1).caps(d.Children.Quotas).caps(d.Children.Limits).rates(d.Children.Rates)
}

func (h argHash) rate(r *Rate) argHash {
	if r == nil {
		return h.byte(0)
	}
	return h.byte(1).num(r.Limit).num(int64(r.Period)).num(r.Burst).byte(byte(r.Algorithm)).byte(byte(r.Calendar)).str(r.Zone)
}

// rates adds a map of rate caps; an empty one changes nothing, so the hash
// of a call without rates is what it was before rates existed.
func (h argHash) rates(m map[string]Rate) argHash {
	if len(m) == 0 {
		return h
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h = h.byte(0xfe).num(int64(len(keys)))
	for _, k := range keys {
		r := m[k]
		h = h.str(k).rate(&r)
	}
	return h
}
