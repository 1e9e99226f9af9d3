package gubernator

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// TestOneAnswerIsOneAllocation: the answer to a call of one request, the
// usual call, is allocated in one piece.
func TestOneAnswerIsOneAllocation(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		if res := newAnswers(1); len(res.Responses) != 1 || res.Responses[0] == nil {
			t.Fatalf("newAnswers(1) = %v; want one empty response", res)
		}
	})
	if allocs > 1 {
		t.Errorf("the answer to one request made %.0f allocations; want 1", allocs)
	}
}

// TestAnswersAreEmptyAndDistinct: every response of a new answer is empty
// and its own, whatever the number of requests.
func TestAnswersAreEmptyAndDistinct(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5} {
		res := newAnswers(n)
		if len(res.Responses) != n {
			t.Fatalf("newAnswers(%d) has %d responses", n, len(res.Responses))
		}
		seen := map[*pb.RateLimitResp]bool{}
		for i, r := range res.Responses {
			if r == nil || seen[r] || !proto.Equal(r, &pb.RateLimitResp{}) {
				t.Fatalf("newAnswers(%d): response %d is %v (shared: %t); want a distinct empty one", n, i, r, seen[r])
			}
			seen[r] = true
		}
	}
}
