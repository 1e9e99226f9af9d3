package gubernator

import (
	"testing"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// TestRepeatedNamesCostNoAllocation: decoding a request whose name and key
// the reused struct held already allocates nothing; a new key costs one
// string, and the struct then holds the new key.
func TestRepeatedNamesCostNoAllocation(t *testing.T) {
	m := &pb.GetRateLimitsReq{}
	same := mustMarshal(t, wireRequests()[1])
	if err := unmarshalRequest(same, m); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { decode(t, same, m) }); allocs != 0 {
		t.Errorf("decoding the name and key the struct held made %.0f allocations; want 0", allocs)
	}
	other := wireRequests()[1]
	keys := [...][]byte{
		mustMarshal(t, &pb.GetRateLimitsReq{Requests: []*pb.RateLimitReq{{Name: other.Requests[0].Name, UniqueKey: "account:1"}}}),
		mustMarshal(t, &pb.GetRateLimitsReq{Requests: []*pb.RateLimitReq{{Name: other.Requests[0].Name, UniqueKey: "account:2"}}}),
	}
	i := 0
	if allocs := testing.AllocsPerRun(100, func() { i++; decode(t, keys[i%2], m) }); allocs != 1 {
		t.Errorf("decoding a new key under the same name made %.0f allocations; want 1", allocs)
	}
	if got := m.Requests[0]; got.Name != other.Requests[0].Name || got.UniqueKey != "account:1" && got.UniqueKey != "account:2" {
		t.Errorf("decoded %v; want the name %q and the last key", got, other.Requests[0].Name)
	}
}

func decode(t *testing.T, data []byte, m *pb.GetRateLimitsReq) {
	t.Helper()
	if err := unmarshalRequest(data, m); err != nil {
		t.Fatal(err)
	}
}
