package gubernator

import (
	"strconv"
	"unicode/utf8"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// appendAnswersJSON appends m as writeJSON writes it (protojson with the
// gateway's options, compacted) without protojson's reflection and the
// compaction's second pass. ok is false when m holds a string that is not
// UTF-8, which protojson refuses: writeJSON then gives the error it always
// gave. A differential test holds the two to the same bytes.
func appendAnswersJSON(b []byte, m *gubernatorv1.GetRateLimitsResp) (out []byte, ok bool) {
	b = append(b, `{"responses":[`...)
	for i, r := range m.Responses {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendAnswerJSON(b, r); !ok {
			return b, false
		}
	}
	return append(b, "]}"...), true
}

func appendAnswerJSON(b []byte, r *gubernatorv1.RateLimitResp) ([]byte, bool) {
	b = append(b, `{"status":`...)
	if name, ok := gubernatorv1.Status_name[int32(r.Status)]; ok {
		b = append(append(append(b, '"'), name...), '"')
	} else {
		b = strconv.AppendInt(b, int64(r.Status), 10)
	}
	b = appendQuotedInt(append(b, `,"limit":`...), r.Limit)
	b = appendQuotedInt(append(b, `,"remaining":`...), r.Remaining)
	b = appendQuotedInt(append(b, `,"reset_time":`...), r.ResetTime)
	var ok bool
	if b, ok = appendJSONString(append(b, `,"error":`...), r.Error); !ok {
		return b, false
	}
	b = append(b, `,"metadata":{`...)
	first := true
	for k, v := range sorted(r.Metadata) {
		if !first {
			b = append(b, ',')
		}
		first = false
		if b, ok = appendJSONString(b, k); !ok {
			return b, false
		}
		if b, ok = appendJSONString(append(b, ':'), v); !ok {
			return b, false
		}
	}
	b = appendQuotedInt(append(b, `},"retry_after":`...), r.RetryAfter)
	return append(b, '}'), true
}

// appendQuotedInt appends a 64-bit integer as protojson writes one: a
// decimal string.
func appendQuotedInt(b []byte, v int64) []byte {
	return append(strconv.AppendInt(append(b, '"'), v, 10), '"')
}

// appendJSONString appends s quoted as protojson quotes it: only '"', '\\'
// and control characters escaped; false when s is not UTF-8.
func appendJSONString(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, false
			}
			b, i = append(b, s[i:i+n]...), i+n
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < ' ':
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"'), true
}
