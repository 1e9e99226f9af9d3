package linz

import (
	"context"
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// resolveAttempts bounds the attempts of each repeat and final read of
// Resolve that end without an answer.
const resolveAttempts = 5

// Resolve settles a quota history after its run, as a client that lost
// answers does once the faults are over. Each Consume whose outcome is
// unknown and that has a request id is sent again with that id: the
// target applies an id at most once and answers a repeat as it answered
// the first, so the answer is the call's, and it returns after the run.
// Then every key, k0 to k<keys-1>, is read once, after every repeat: the
// final usage. A Consume still unknown after resolveAttempts stays unknown,
// returning after the final reads. Each attempt is bounded by timeout.
// The history given is not changed; Resolve fails when a final read gets
// no answer.
func Resolve(ctx context.Context, t Target, history []porcupine.Operation, keys int, timeout time.Duration) ([]porcupine.Operation, error) {
	var end int64
	client := 0
	for _, op := range history {
		end, client = max(end, op.Return), max(client, op.ClientId+1)
	}
	out := make([]porcupine.Operation, 0, len(history)+keys)
	var unsettled []int
	for _, op := range history {
		in := op.Input.(QuotaOp)
		if isUnknown(op.Output) && in.Kind == Consume && in.RequestID != "" {
			if ok, err := repeat(ctx, timeout, func(ctx context.Context) (bool, error) {
				return t.Consume(ctx, in.Key, in.N, in.RequestID)
			}); err == nil {
				op.Output, op.Return = QuotaResult{OK: ok}, end+1
			}
		}
		if isUnknown(op.Output) {
			unsettled = append(unsettled, len(out))
		}
		out = append(out, op)
	}
	for k := range keys {
		op := QuotaOp{Kind: Read, Key: fmt.Sprintf("k%d", k)}
		n, err := repeat(ctx, timeout, func(ctx context.Context) (int64, error) { return t.Read(ctx, op.Key) })
		if err != nil {
			return nil, fmt.Errorf("linz: the final read of %s: %w", op.Key, err)
		}
		at := end + 2 + 2*int64(k)
		out = append(out, porcupine.Operation{ClientId: client, Input: op, Call: at, Return: at + 1, Output: QuotaResult{Usage: n}})
	}
	for _, i := range unsettled {
		out[i].Return = end + 2 + 2*int64(keys)
	}
	return out, nil
}

// repeat calls f, each attempt bounded by timeout, until it answers or
// resolveAttempts attempts did not; it returns the last error then.
func repeat[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	var v T
	var err error
	for range resolveAttempts {
		bounded, cancel := context.WithTimeout(ctx, timeout)
		v, err = f(bounded)
		cancel()
		if err == nil || ctx.Err() != nil {
			return v, err
		}
	}
	return v, err
}
