package linz

import "testing"

func TestQuotaHistories(t *testing.T) {
	checkHistories(t, Quota(10), []history{
		{"sequential charges and reads", []porcupineOp{
			call(0, 0, 10, consume("k", 5), ok),
			call(1, 15, 20, read("k"), usage(5)),
			call(1, 21, 25, consume("k", 6), denied),
			call(0, 22, 30, consume("k", 5), ok),
			call(1, 31, 35, read("k"), usage(10)),
		}, true},
		{"reads overlapping a charge cannot see it undone", []porcupineOp{
			call(0, 0, 10, consume("k", 5), ok),
			call(1, 1, 2, read("k"), usage(5)),
			call(2, 3, 4, read("k"), usage(0)),
		}, false},
		{"a read overlapping a charge sees it before", []porcupineOp{
			call(0, 0, 10, consume("k", 5), ok),
			call(1, 1, 2, read("k"), usage(0)),
			call(2, 3, 4, read("k"), usage(5)),
		}, true},
		{"a stale read as a follower serves it", []porcupineOp{
			call(0, 0, 10, consume("k", 5), ok),
			call(1, 20, 30, read("k"), usage(0)),
		}, false},
		{"a denied charge changes nothing", []porcupineOp{
			call(0, 0, 10, consume("k", 8), ok),
			call(0, 11, 20, consume("k", 5), denied),
			call(0, 21, 30, read("k"), usage(8)),
		}, true},
		{"a denied charge that counted", []porcupineOp{
			call(0, 0, 10, consume("k", 8), ok),
			call(0, 11, 20, consume("k", 5), denied),
			call(0, 21, 30, read("k"), usage(13)),
		}, false},
		{"a denial of a charge that fits", []porcupineOp{
			call(0, 0, 10, consume("k", 5), denied),
		}, false},
		{"a charge over the cap", []porcupineOp{
			call(0, 0, 10, consume("k", 11), ok),
		}, false},
		{"a charge that overflows is denied", []porcupineOp{
			call(0, 0, 10, consume("k", 5), ok),
			call(0, 11, 20, consume("k", 1<<63-1), denied),
		}, true},
		{"an unknown outcome that must be assumed applied", []porcupineOp{
			call(0, 0, never, consume("k", 5), Unknown),
			call(1, 10, 20, read("k"), usage(5)),
		}, true},
		{"the same read without the unknown call", []porcupineOp{
			call(1, 10, 20, read("k"), usage(5)),
		}, false},
		{"an unknown outcome never seen", []porcupineOp{
			call(0, 0, never, consume("k", 5), Unknown),
			call(1, 10, 20, read("k"), usage(0)),
		}, true},
		{"an unknown outcome seen, then unseen", []porcupineOp{
			call(0, 0, never, consume("k", 5), Unknown),
			call(1, 10, 20, read("k"), usage(5)),
			call(1, 21, 30, read("k"), usage(0)),
		}, false},
		{"keys are apart", []porcupineOp{
			call(0, 0, 10, consume("a", 10), ok),
			call(1, 11, 20, consume("b", 10), ok),
			call(1, 21, 30, read("a"), usage(10)),
		}, true},
		{"request ids mean nothing to Quota", []porcupineOp{
			call(0, 0, 10, retryable("r1", 5), ok),
			call(0, 20, 30, retryable("r1", 5), ok),
			call(0, 40, 50, read("k"), usage(10)),
		}, true},
	})
}

func TestIdempotentHistories(t *testing.T) {
	checkHistories(t, Idempotent(10), []history{
		{"a retry after an unknown outcome", []porcupineOp{
			call(0, 0, never, retryable("r1", 5), Unknown),
			call(0, 10, 20, retryable("r1", 5), ok),
			call(1, 30, 40, read("k"), usage(5)),
		}, true},
		{"a double charge on retry", []porcupineOp{
			call(0, 0, 10, retryable("r1", 5), ok),
			call(0, 20, 30, retryable("r1", 5), ok),
			call(1, 40, 50, read("k"), usage(10)),
		}, false},
		{"a retry with another answer", []porcupineOp{
			call(0, 0, 10, retryable("r1", 8), ok),
			call(0, 20, 30, retryable("r1", 8), denied),
		}, false},
		{"a retry of a denial is denied again and charges nothing", []porcupineOp{
			call(0, 0, 10, retryable("r1", 8), ok),
			call(0, 11, 20, retryable("r2", 5), denied),
			call(0, 21, 30, retryable("r2", 5), denied),
			call(0, 31, 40, read("k"), usage(8)),
		}, true},
		{"two requests are two charges", []porcupineOp{
			call(0, 0, 10, retryable("r1", 5), ok),
			call(0, 20, 30, retryable("r2", 5), ok),
			call(1, 40, 50, read("k"), usage(10)),
		}, true},
		{"a stale read", []porcupineOp{
			call(0, 0, 10, retryable("r1", 5), ok),
			call(1, 20, 30, read("k"), usage(0)),
		}, false},
	})
}
