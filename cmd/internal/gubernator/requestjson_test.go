package gubernator

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// requestJSONSeeds are request bodies in the shapes callers send, and
// some the fast path leaves to protojson.
var requestJSONSeeds = []string{
	`{"requests":[{"name":"bench","unique_key":"one","hits":1,"limit":1000000000,"duration":1000}]}`,
	`{"requests":[{"name":"requests_per_sec","uniqueKey":"account:12345","hits":"1","limit":"10","duration":"1000"}]}`,
	` { "requests" : [ { "name" : "v" , "unique_key" : "s" , "hits" : -1 , "limit" : 10 , "duration" : 60000 , "burst" : 10 , "algorithm" : "LEAKY_BUCKET" , "max_wait" : "120000" } , {} ] } `,
	`{"requests":[{"name":"d","unique_key":"k","limit":5,"duration":2,"behavior":"DURATION_IS_GREGORIAN","createdAt":"-0","algorithm":7}]}`,
	`{"requests":[{"name":"r","unique_key":"k","limit":5,"duration":9,"behavior":40,"maxWait":0,"created_at":123}]}`,
	`{"requests":[{"name":"é\u00e9"}]}`,
	`{"requests":[{"unique_key":"k\"q"}]}`,
	`{"requests":[{"name":"a","name":"b"}]}`,
	`{"requests":[{"unique_key":"a","uniqueKey":"b"}]}`,
	`{"requests":[{"name":null}]}`,
	`{"requests":[{"hits":1e3}]}`,
	`{"requests":[{"limit":1.0}]}`,
	`{"requests":[{"burst":01}]}`,
	`{"requests":[{"burst":"01"}]}`,
	`{"requests":[{"hits":9223372036854775807,"limit":"-9223372036854775808","duration":99999999999999999999}]}`,
	`{"requests":[{"name":"m","metadata":{"a":"b"},"other":[1,{"x":null}]}]}`,
	`{"requests":[],"x":1}`,
	`{"requests":[{"algorithm":"NOPE"}]}`,
	`{"requests":[{"behavior":2147483648}]}`,
	`{"requests":[{"algorithm":"1"}]}`,
	"{\"requests\":[{\"name\":\"\xff\"}]}",
	`{"requests":[{"name":"a"}]}x`,
}

// FuzzRequestJSON holds the fast JSON request decoder to protojson with
// the gateway's options: whatever body it takes, it decodes to the
// message protojson decodes, and it takes none that protojson refuses.
func FuzzRequestJSON(f *testing.F) {
	for _, body := range requestJSONSeeds {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var got pb.GetRateLimitsReq
		if !decodeRequestJSON([]byte(body), &got) {
			return
		}
		var want pb.GetRateLimitsReq
		if err := jsonIn.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("took %q, which protojson refuses: %v", body, err)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("%q: decoded %v, protojson decodes %v", body, &got, &want)
		}
	})
}

// TestRequestJSONTakesWhatCallersSend: the bodies callers send take the
// fast path; those it leaves to protojson do not.
func TestRequestJSONTakesWhatCallersSend(t *testing.T) {
	for i, body := range requestJSONSeeds {
		var m pb.GetRateLimitsReq
		if got, want := decodeRequestJSON([]byte(body), &m), i < 5; got != want {
			t.Errorf("%s: taken %t, want %t", body, got, want)
		}
	}
}

// BenchmarkRequestJSON decodes a one-request body as the HTTP JSON path
// does, by the fast path and by protojson.
func BenchmarkRequestJSON(b *testing.B) {
	body := []byte(requestJSONSeeds[0])
	for _, dec := range []struct {
		name   string
		decode func(*pb.GetRateLimitsReq) bool
	}{
		{"fast", func(m *pb.GetRateLimitsReq) bool { return decodeRequestJSON(body, m) }},
		{"protojson", func(m *pb.GetRateLimitsReq) bool { return jsonIn.Unmarshal(body, m) == nil }},
	} {
		b.Run(dec.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var m pb.GetRateLimitsReq
				if !dec.decode(&m) {
					b.Fatal("not decoded")
				}
			}
		})
	}
}
