package linz

import (
	"math"
	"testing"

	"github.com/anishathalye/porcupine"
)

// never is the return time of a call whose outcome is unknown.
const never = math.MaxInt32

// call builds one finished call of a hand-made history.
func call(client int, from, to int64, in, out any) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: from, Return: to, Input: in, Output: out}
}

func consume(key string, n int64) QuotaOp { return QuotaOp{Kind: Consume, Key: key, N: n} }

func retryable(id string, n int64) QuotaOp {
	return QuotaOp{Kind: Consume, Key: "k", N: n, RequestID: id}
}

func read(key string) QuotaOp { return QuotaOp{Kind: Read, Key: key} }

var (
	ok     = QuotaResult{OK: true}
	denied = QuotaResult{}
)

func usage(n int64) QuotaResult { return QuotaResult{Usage: n} }

// history is one hand-made case: whether its calls are linearizable.
type history struct {
	name  string
	ops   []porcupine.Operation
	legal bool
}

// checkHistories runs each case through model.
func checkHistories(t *testing.T, model porcupine.Model, cases []history) {
	t.Helper()
	for _, h := range cases {
		t.Run(h.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(model, h.ops); got != h.legal {
				t.Fatalf("linearizable = %v, want %v", got, h.legal)
			}
		})
	}
}

// porcupineOp shortens the case tables.
type porcupineOp = porcupine.Operation
