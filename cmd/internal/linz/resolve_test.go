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

// silent is a target whose consumes never answer, and whose reads do not
// either when deaf.
type silent struct {
	*flakyTarget
	deaf bool
}

func (s silent) Consume(context.Context, string, int64, string) (bool, error) {
	return false, errLostReply
}

func (s silent) Read(_ context.Context, key string) (int64, error) {
	if s.deaf {
		return 0, errLostReply
	}
	return s.q.read(key), nil
}

// TestResolveLeavesWhatStaysUnknown: a consume that no repeat answers stays
// unknown and returns after the final reads, the history given is not
// changed, and a final read that gets no answer fails Resolve.
func TestResolveLeavesWhatStaysUnknown(t *testing.T) {
	f := &flakyTarget{q: newQuota(false), p: newPool(false)}
	h := []porcupineOp{call(0, 0, never, QuotaOp{Kind: Consume, Key: "k0", N: 2, RequestID: "a"}, Unknown)}
	given := h[0]
	out, err := Resolve(t.Context(), silent{flakyTarget: f}, h, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Output != Unknown || out[1].Output != usage(0) || out[0].Return <= out[1].Return {
		t.Fatalf("resolved history %v; want the consume still unknown, returning after the final read of 0", out)
	}
	if h[0] != given {
		t.Errorf("Resolve changed the history given: %v, was %v", h[0], given)
	}
	if _, err := Resolve(t.Context(), silent{flakyTarget: f, deaf: true}, h, 1, time.Second); err == nil {
		t.Fatal("Resolve answered though no final read got an answer")
	}
}
