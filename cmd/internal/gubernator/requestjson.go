package gubernator

import (
	"unicode/utf8"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// decodeRequestJSON is readRequest's fast path for the JSON callers send:
// an object holding only "requests", a list of objects whose fields are
// the known scalar ones (by proto or JSON name), each at most once,
// strings without escapes, integers written plainly (quoted or not), enums
// by name or number. It fills m, which is empty, exactly as protojson with
// the gateway's options would. It returns false for anything else (other
// fields, metadata, null, escapes, exponents, duplicates, malformed JSON),
// leaving m half written for protojson to decode or refuse as before.
func decodeRequestJSON(data []byte, m *gubernatorv1.GetRateLimitsReq) bool {
	s := jsonScanner{b: data}
	if !s.token('{') || string(s.key()) != "requests" || !s.token('[') {
		return false
	}
	for {
		r := &gubernatorv1.RateLimitReq{}
		if !s.request(r) {
			return false
		}
		m.Requests = append(m.Requests, r)
		if s.token(']') {
			break
		}
		if !s.token(',') {
			return false
		}
	}
	return s.token('}') && s.end()
}

// The fields of a RateLimitReq the fast path takes, as bits of the set
// of those already seen.
const (
	fieldName = 1 << iota
	fieldUniqueKey
	fieldHits
	fieldLimit
	fieldDuration
	fieldAlgorithm
	fieldBehavior
	fieldBurst
	fieldMaxWait
	fieldCreatedAt
)

// jsonFields maps the proto and JSON names of RateLimitReq's scalar
// fields to their bits.
var jsonFields = map[string]int{
	"name": fieldName, "unique_key": fieldUniqueKey, "uniqueKey": fieldUniqueKey,
	"hits": fieldHits, "limit": fieldLimit, "duration": fieldDuration,
	"algorithm": fieldAlgorithm, "behavior": fieldBehavior, "burst": fieldBurst,
	"max_wait": fieldMaxWait, "maxWait": fieldMaxWait, "created_at": fieldCreatedAt, "createdAt": fieldCreatedAt,
}

// jsonScanner reads the JSON decodeRequestJSON takes; every method skips
// the white space before what it reads.
type jsonScanner struct {
	b []byte
	i int
}

// request reads one RateLimitReq object into r.
func (s *jsonScanner) request(r *gubernatorv1.RateLimitReq) bool {
	if !s.token('{') {
		return false
	}
	if s.token('}') {
		return true
	}
	seen := 0
	for {
		f, ok := jsonFields[string(s.key())]
		if !ok || seen&f != 0 || !s.field(r, f) {
			return false
		}
		seen |= f
		if s.token('}') {
			return true
		}
		if !s.token(',') {
			return false
		}
	}
}

// field reads the value of field f into r.
func (s *jsonScanner) field(r *gubernatorv1.RateLimitReq, f int) bool {
	switch f {
	case fieldName, fieldUniqueKey:
		v, ok := s.str()
		if f == fieldName {
			r.Name = string(v)
		} else {
			r.UniqueKey = string(v)
		}
		return ok
	case fieldAlgorithm:
		v, ok := s.enum(gubernatorv1.Algorithm_value)
		r.Algorithm = gubernatorv1.Algorithm(v)
		return ok
	case fieldBehavior:
		v, ok := s.enum(gubernatorv1.Behavior_value)
		r.Behavior = gubernatorv1.Behavior(v)
		return ok
	}
	v, ok := s.int64()
	switch f {
	case fieldHits:
		r.Hits = v
	case fieldLimit:
		r.Limit = v
	case fieldDuration:
		r.Duration = v
	case fieldBurst:
		r.Burst = v
	case fieldMaxWait:
		r.MaxWait = v
	case fieldCreatedAt:
		r.CreatedAt = &v
	}
	return ok
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// token reads c if it comes next.
func (s *jsonScanner) token(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether nothing but white space is left.
func (s *jsonScanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// key reads an object's key and the colon after it; nil if there is none.
func (s *jsonScanner) key() []byte {
	k, ok := s.str()
	if !ok || !s.token(':') {
		return nil
	}
	return k
}

// str reads a string without escapes, in UTF-8.
func (s *jsonScanner) str() ([]byte, bool) {
	if !s.token('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, utf8.Valid(v)
		case c == '\\' || c < ' ':
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// int64 reads an integer written plainly, quoted or not: an optional
// minus and at most 18 digits, without leading zeros, so it cannot
// overflow.
func (s *jsonScanner) int64() (int64, bool) {
	quoted := s.token('"')
	if !quoted {
		s.space()
	}
	v, ok := s.digits(18)
	if quoted && (!ok || s.i >= len(s.b) || s.b[s.i] != '"') {
		return 0, false
	}
	if quoted {
		s.i++
	}
	return v, ok
}

// enum reads an enum by name (one of names) or as a plain number of at
// most 9 digits.
func (s *jsonScanner) enum(names map[string]int32) (int32, bool) {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '"' {
		name, ok := s.str()
		v, known := names[string(name)]
		return v, ok && known
	}
	v, ok := s.digits(9)
	return int32(v), ok
}

// digits reads an optional minus and 1 to max digits, without a leading
// zero. What follows is the caller's to check: a fraction or an exponent
// is no closing quote, comma or brace.
func (s *jsonScanner) digits(max int) (int64, bool) {
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	var v int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && s.i-start < max {
		v = v*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	n := s.i - start
	if n == 0 || n > 1 && s.b[start] == '0' {
		return 0, false
	}
	if s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		return 0, false // more digits than max
	}
	if neg {
		v = -v
	}
	return v, true
}
