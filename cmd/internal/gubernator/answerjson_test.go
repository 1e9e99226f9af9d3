package gubernator

import (
	"bytes"
	"testing"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// FuzzAnswersJSON holds the hand-written JSON of answers to writeJSON's:
// the same bytes for any status, numbers, error and metadata, and a
// refusal exactly where protojson refuses (a string that is not UTF-8).
func FuzzAnswersJSON(f *testing.F) {
	f.Add(int32(0), int64(10), int64(9), int64(1_700_000_001_000), "", "owner", "127.0.0.1:7070", int64(0))
	f.Add(int32(1), int64(-1), int64(0), int64(0), "name is required, such as \"requests_per_sec\".", "", "", int64(334))
	f.Add(int32(7), int64(1), int64(2), int64(3), "\x00\x01\x1f\b\f\n\r\t\\\"<>&\u2028\ufffd\x7f é", "k\n", "\xff", int64(-5))
	f.Add(int32(2), int64(1), int64(2), int64(3), "\x00\x01\x1f\b\f\n\r\t\\\"<>&\u2028\ufffd\x7f é", "k\n", "v", int64(-5))
	f.Fuzz(func(t *testing.T, status int32, limit, remaining, reset int64, errText, key, value string, retry int64) {
		m := &pb.GetRateLimitsResp{Responses: []*pb.RateLimitResp{
			{Status: pb.Status(status), Limit: limit, Remaining: remaining, ResetTime: reset, Error: errText, RetryAfter: retry},
			{Metadata: map[string]string{key: value, key + "2": errText}},
		}}
		want, wantErr := jsonOut.Marshal(m)
		if wantErr == nil {
			want, wantErr = compactJSON(want)
		}
		got, ok := appendAnswersJSON(nil, m)
		switch {
		case ok != (wantErr == nil):
			t.Fatalf("encoded: %t, protojson's error: %v", ok, wantErr)
		case ok && !bytes.Equal(got, want):
			t.Fatalf("encoded\n%s\nprotojson writes\n%s", got, want)
		}
	})
}

// TestAnswersJSONIsProtojson: the answers of wireResponses, an empty list
// among them, come out as protojson writes them.
func TestAnswersJSONIsProtojson(t *testing.T) {
	for _, m := range wireResponses() {
		want, err := jsonOut.Marshal(m)
		if err == nil {
			want, err = compactJSON(want)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := appendAnswersJSON(nil, m); !ok || !bytes.Equal(got, want) {
			t.Errorf("encoded %s (%t), protojson writes %s", got, ok, want)
		}
	}
}

// BenchmarkAnswersJSON writes a one-answer GetRateLimitsResp as the HTTP
// JSON path does, by hand and through protojson and the compaction.
func BenchmarkAnswersJSON(b *testing.B) {
	m := wireResponses()[1]
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := appendAnswersJSON(nil, m); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := jsonOut.Marshal(m)
			if err == nil {
				_, err = compactJSON(data)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
