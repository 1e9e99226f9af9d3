package linz

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// forgetful is a target broken on purpose: it charges every Consume,
// whatever its request id, as a client that retries without one.
type forgetful struct{ *flakyTarget }

func (f forgetful) Consume(_ context.Context, key string, n int64, _ string) (bool, error) {
	return f.q.consume(key, n), nil
}

// resolveCase is a run whose replies were lost: consume a of 2 applied,
// consume b of 3 never applied, and a read that saw a. Resolve through
// target settles it.
func resolveCase(t *testing.T, target func(*flakyTarget) Target) ([]porcupineOp, error) {
	f := &flakyTarget{q: newQuota(false), p: newPool(false), rng: rand.New(rand.NewPCG(3, 4))}
	f.q.limit = 100
	f.q.consumeOnce("k0", 2, "a")
	h := []porcupineOp{
		call(0, 0, never, QuotaOp{Kind: Consume, Key: "k0", N: 2, RequestID: "a"}, Unknown),
		call(1, 0, never, QuotaOp{Kind: Consume, Key: "k0", N: 3, RequestID: "b"}, Unknown),
		call(2, 10, 20, read("k0"), usage(2)),
	}
	return Resolve(t.Context(), target(f), h, 2, time.Second)
}

// TestResolveSettlesUnknownConsumes: each unknown consume is repeated with
// its request id and answered as its first application, the final reads
// follow, and the settled history is linearizable.
func TestResolveSettlesUnknownConsumes(t *testing.T) {
	h, err := resolveCase(t, func(f *flakyTarget) Target { return f })
	if err != nil {
		t.Fatal(err)
	}
	want := []any{ok, ok, usage(2), usage(5), usage(0)}
	if len(h) != len(want) {
		t.Fatalf("resolved history has %d calls, want %d: %v", len(h), len(want), h)
	}
	for i, w := range want {
		if h[i].Output != w {
			t.Errorf("call %d: %v, want %v", i, h[i].Output, w)
		}
	}
	for i := range h[:3] {
		if h[i].Return >= h[3].Call {
			t.Errorf("call %d returns at %d, after the final reads begin at %d", i, h[i].Return, h[3].Call)
		}
	}
	Check(t, Idempotent(100), h, time.Minute)
}

// TestResolveCatchesRetriesWithoutIDs is the negative control: a target
// that charges a repeat again makes the final read one the model cannot
// reach.
func TestResolveCatchesRetriesWithoutIDs(t *testing.T) {
	h, err := resolveCase(t, func(f *flakyTarget) Target { return forgetful{f} })
	if err != nil {
		t.Fatal(err)
	}
	if Check(&failingTB{TB: t}, Idempotent(100), h, time.Minute) {
		t.Fatalf("a retry charged twice passed the check: %v", h)
	}
}
