package gubernator

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// wireRequests are requests in every shape the fast path takes, and some
// it leaves to proto.Unmarshal (metadata).
func wireRequests() []*pb.GetRateLimitsReq {
	at := int64(1_700_000_000_000)
	return []*pb.GetRateLimitsReq{
		{},
		{Requests: []*pb.RateLimitReq{{Name: "requests_per_sec", UniqueKey: "account:12345", Hits: 1, Limit: 10, Duration: 1000}}},
		{Requests: []*pb.RateLimitReq{
			{Name: "v", UniqueKey: "s", Hits: 1, Limit: 10, Duration: 60000, Burst: 10, Algorithm: pb.Algorithm_LEAKY_BUCKET, MaxWait: 120000},
			{Name: "d", UniqueKey: "k", Hits: -3, Limit: 5, Duration: 2, Behavior: pb.Behavior_DURATION_IS_GREGORIAN | pb.Behavior_RESET_REMAINING, CreatedAt: &at},
			{Name: "é", UniqueKey: "ü", Algorithm: -1, Behavior: -7},
			{},
		}},
		{Requests: []*pb.RateLimitReq{{Name: "m", UniqueKey: "k", Limit: 1, Duration: 1, Metadata: map[string]string{"a": "b"}}}},
	}
}

// FuzzUnmarshalRequest holds the hand-written request decoder to
// proto.Unmarshal: for any bytes, decoding into a message an earlier call
// left its structs in gives the same message, or an error exactly when
// proto.Unmarshal gives one.
func FuzzUnmarshalRequest(f *testing.F) {
	for _, m := range wireRequests() {
		data, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x0a, 0x03, 0x0a, 0x01, 0xff})                  // a name that is not UTF-8
	f.Add([]byte{0x0a, 0x03, 0x18, 0x80, 0x80})                  // a truncated varint
	f.Add([]byte{0x0a, 0x02, 0x1a, 0x00})                        // hits as bytes: an unknown field
	f.Add([]byte{0x12, 0x00, 0x0a, 0x00})                        // an unknown field of the batch
	f.Add([]byte{0x0a, 0x04, 0x60, 0x01, 0x08, 0x02})            // field 12, unknown
	f.Add(protowire.AppendTag(nil, 1, protowire.StartGroupType)) // a group where a message belongs
	f.Fuzz(func(t *testing.T, data []byte) {
		var want pb.GetRateLimitsReq
		wantErr := proto.Unmarshal(data, &want)
		got := &pb.GetRateLimitsReq{}
		for _, earlier := range wireRequests() { // leave structs of earlier calls behind
			if err := unmarshalRequest(mustMarshal(t, earlier), got); err != nil {
				t.Fatal(err)
			}
		}
		err := unmarshalRequest(data, got)
		switch {
		case (err != nil) != (wantErr != nil):
			t.Fatalf("error %v, proto.Unmarshal's %v", err, wantErr)
		case err != nil && err.Error() != wantErr.Error():
			t.Fatalf("error %q, proto.Unmarshal's %q", err, wantErr)
		case err == nil && !proto.Equal(got, &want):
			t.Fatalf("decoded %v, proto.Unmarshal gives %v", got, &want)
		}
	})
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestUnmarshalRequestReusesStructs: decoding into a message an earlier
// call used allocates only the request's two strings.
func TestUnmarshalRequestReusesStructs(t *testing.T) {
	data := mustMarshal(t, wireRequests()[1])
	m := &pb.GetRateLimitsReq{}
	if err := unmarshalRequest(data, m); err != nil {
		t.Fatal(err)
	}
	first := m.Requests[0]
	allocs := testing.AllocsPerRun(100, func() {
		if err := unmarshalRequest(data, m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 || m.Requests[0] != first {
		t.Errorf("a decode into a used message made %.0f allocations (reused its struct: %t); want 2, the name and the key", allocs, m.Requests[0] == first)
	}
}

// wireResponses are answers in every shape the service gives, and more.
func wireResponses() []*pb.GetRateLimitsResp {
	return []*pb.GetRateLimitsResp{
		{},
		{Responses: []*pb.RateLimitResp{{Status: pb.Status_UNDER_LIMIT, Limit: 10, Remaining: 9, ResetTime: 1_700_000_001_000, Metadata: map[string]string{"owner": "127.0.0.1:7070"}}}},
		{Responses: []*pb.RateLimitResp{
			{Status: pb.Status_OVER_LIMIT, Limit: 1_000_000_000, RetryAfter: 334, Metadata: map[string]string{"owner": "o"}},
			{Error: "name is required, such as \"requests_per_sec\"."},
			{Status: -1, Limit: -2, Remaining: -3, ResetTime: -4, RetryAfter: -5},
			{Metadata: map[string]string{"z": "", "": "a", "m": "é"}},
			{},
		}},
		{Responses: []*pb.RateLimitResp{ // lengths of two and three bytes
			{Error: strings.Repeat("e", 200), Metadata: map[string]string{"owner": "o"}},
			{Error: strings.Repeat("é", 10_000)},
		}},
	}
}

// TestAppendResponseIsProtoMarshal: the hand-written answer encoder writes
// the bytes proto.Marshal writes in its deterministic form.
func TestAppendResponseIsProtoMarshal(t *testing.T) {
	for _, m := range wireResponses() {
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := appendResponse(nil, m)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: encoded %x, proto.Marshal %x", m, got, want)
		}
	}
}

// BenchmarkWireRequest decodes a one-request GetRateLimitsReq, by hand
// into a used message (as the gRPC path does) and by proto.Unmarshal.
func BenchmarkWireRequest(b *testing.B) {
	data := mustMarshal(b, wireRequests()[1])
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		m := &pb.GetRateLimitsReq{}
		for b.Loop() {
			if err := unmarshalRequest(data, m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m pb.GetRateLimitsReq
			if err := proto.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWireResponse encodes a one-answer GetRateLimitsResp through the
// gRPC path's codec and through grpc-go's protobuf codec.
func BenchmarkWireResponse(b *testing.B) {
	m := wireResponses()[1]
	c := newWireCodec()
	for _, codec := range []struct {
		name    string
		marshal func(any) error
	}{
		{"hand", func(v any) error { _, err := c.Marshal(v); return err }},
		{"proto", func(v any) error { _, err := c.CodecV2.Marshal(v); return err }},
	} {
		b.Run(codec.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := codec.marshal(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWireCodecAnswerAllocations: encoding a one-answer GetRateLimitsResp
// for grpc-go costs three allocations (the bytes and grpc-go's buffer
// list around them), where grpc-go's protobuf codec makes seven.
func TestWireCodecAnswerAllocations(t *testing.T) {
	m, c := wireResponses()[1], newWireCodec()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.Marshal(m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Errorf("an answer's encoding made %.0f allocations; want at most 3", allocs)
	}
}
