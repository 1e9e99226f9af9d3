package linz

import "testing"

func acquireOp() LeaseOp           { return LeaseOp{Kind: Acquire} }
func releaseOp(id string) LeaseOp  { return LeaseOp{Kind: Release, ID: id} }
func validateOp(id string) LeaseOp { return LeaseOp{Kind: Validate, ID: id} }

func granted(id string) LeaseResult { return LeaseResult{OK: true, ID: id} }

var (
	refused = LeaseResult{}
	yes     = LeaseResult{OK: true}
	no      = LeaseResult{}
)

func TestLeasePoolHistories(t *testing.T) {
	checkHistories(t, LeasePool(2), []history{
		{"grants up to the limit, then denies", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(1, 11, 20, acquireOp(), granted("b")),
			call(2, 21, 30, acquireOp(), refused),
			call(0, 31, 40, releaseOp("a"), yes),
			call(2, 41, 50, acquireOp(), granted("c")),
			call(1, 51, 60, validateOp("a"), no),
			call(1, 61, 70, validateOp("b"), yes),
			call(1, 71, 80, releaseOp("a"), no),
		}, true},
		{"a double grant", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(1, 11, 20, acquireOp(), granted("a")),
		}, false},
		{"an id granted again after its release", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(0, 11, 20, releaseOp("a"), yes),
			call(1, 21, 30, acquireOp(), granted("a")),
		}, false},
		{"more held than the limit", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(1, 0, 10, acquireOp(), granted("b")),
			call(2, 0, 10, acquireOp(), granted("c")),
		}, false},
		{"a denial with room", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(1, 11, 20, acquireOp(), refused),
		}, false},
		{"a denial overlapping a release", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(1, 0, 10, acquireOp(), granted("b")),
			call(0, 11, 30, releaseOp("a"), yes),
			call(1, 12, 20, acquireOp(), refused),
		}, true},
		{"a stale validate as a follower serves it", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(0, 11, 20, releaseOp("a"), yes),
			call(1, 21, 30, validateOp("a"), yes),
		}, false},
		{"a release twice", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(0, 11, 20, releaseOp("a"), yes),
			call(1, 21, 30, releaseOp("a"), yes),
		}, false},
		{"an unknown acquire that must be assumed granted", []porcupineOp{
			call(0, 0, never, acquireOp(), Unknown),
			call(1, 10, 20, acquireOp(), granted("a")),
			call(2, 21, 30, acquireOp(), refused),
		}, true},
		{"the same denial without the unknown acquire", []porcupineOp{
			call(1, 10, 20, acquireOp(), granted("a")),
			call(2, 21, 30, acquireOp(), refused),
		}, false},
		{"an unknown release that must be assumed applied", []porcupineOp{
			call(0, 0, 10, acquireOp(), granted("a")),
			call(0, 11, never, releaseOp("a"), Unknown),
			call(1, 20, 30, validateOp("a"), no),
		}, true},
	})
}
