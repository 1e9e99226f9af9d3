package governor

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// waitRates are the tenant's rate caps of the Wait tests: "calls" lets one
// unit through every 200ms, "slow" one every 10s, "window" two per 300ms
// window.
var waitRates = map[string]rate{
	"calls":  {Limit: 5, Per: time.Second, Burst: 1, Algorithm: "leaky_bucket"},
	"slow":   {Limit: 1, Per: 10 * time.Second, Burst: 1, Algorithm: "leaky_bucket"},
	"window": {Limit: 2, Per: 300 * time.Millisecond},
}

// waitTask starts a governord with waitRates and returns a task with a
// quota on every resource, to count what was charged.
func waitTask(t *testing.T, opts ...Option) (*governord, context.Context, *Task) {
	t.Helper()
	g := newRateGovernord(t, waitRates)
	c := dial(t, g.addr, opts...)
	ctx, tk := task(t, c, Spec{Name: "waiter", Quotas: map[string]int64{"calls": 100, "slow": 100, "window": 100, "spent": 1}})
	return g, ctx, tk
}

// deadline returns ctx bounded by d, cancelled when t ends.
func deadline(t *testing.T, ctx context.Context, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	t.Cleanup(cancel)
	return ctx
}

// Wait returns at once when admitted, and sleeps until its booked slot
// otherwise.
func TestWaitAdmittedNowOrSleepsUntilItsSlot(t *testing.T) {
	t.Parallel()
	g, ctx, tk := waitTask(t)
	b, err := Wait(deadline(t, ctx, 5*time.Second), "calls", 1)
	if err != nil || b.Status != Admitted || b.RetryAfter != 0 || !b.Rate {
		t.Fatalf("the first wait: %+v, %v; want admitted now by the rate cap", b, err)
	}
	for i := range 3 {
		start := time.Now()
		b, err := Wait(deadline(t, ctx, 5*time.Second), "calls", 1)
		slept := time.Since(start)
		if err != nil || b.Status != Scheduled {
			t.Fatalf("wait %d: %+v, %v; want scheduled", i+2, b, err)
		}
		if b.RetryAfter <= 0 || b.RetryAfter > 200*time.Millisecond {
			t.Fatalf("wait %d: slot %s away, want within the 200ms a unit takes", i+2, b.RetryAfter)
		}
		if slept < b.RetryAfter {
			t.Fatalf("wait %d returned after %s, before its slot %s away", i+2, slept, b.RetryAfter)
		}
	}
	if u := used(t, g.addr, tk.ID(), "calls"); u != 4 {
		t.Fatalf("%d calls charged for 4 waits", u)
	}
}

// A wait that would pass the context's deadline is refused at once and
// charged nothing; so is one that can never fit.
func TestWaitRefusedWithoutSleeping(t *testing.T) {
	t.Parallel()
	g, ctx, tk := waitTask(t)
	if _, err := Consume(ctx, "slow", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Consume(ctx, "spent", 1); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		resource  string
		n         int64
		timeout   time.Duration
		neverFits bool
	}{
		{"past the deadline", "slow", 1, time.Second, false},
		{"more than the burst", "slow", 2, 5 * time.Second, true},
		{"a spent quota", "spent", 1, 5 * time.Second, true},
	}
	for _, tc := range cases {
		wctx := deadline(t, ctx, tc.timeout)
		_, err := Wait(wctx, tc.resource, tc.n)
		if wctx.Err() != nil {
			t.Fatalf("%s: wait returned after its deadline", tc.name)
		}
		d := asDenied(t, err)
		if !errors.Is(err, ErrDenied) || errors.Is(err, ErrNeverFits) != tc.neverFits || d.NeverFits != tc.neverFits {
			t.Fatalf("%s: %v (never fits %v), want never fits %v", tc.name, err, d.NeverFits, tc.neverFits)
		}
		if !tc.neverFits && d.RetryAfter <= tc.timeout {
			t.Fatalf("%s: the refusal asks %s, within the deadline of %s", tc.name, d.RetryAfter, tc.timeout)
		}
	}
	for _, r := range []string{"slow", "spent"} {
		if u := used(t, g.addr, tk.ID(), r); u != 1 {
			t.Fatalf("%d %s charged; the refused waits charged something", u, r)
		}
	}
}

// A context that ends while Wait sleeps ends the wait with its cause, and
// the slot stays charged.
func TestWaitEndedByItsContextKeepsTheCharge(t *testing.T) {
	t.Parallel()
	g, ctx, tk := waitTask(t)
	if _, err := Consume(ctx, "slow", 1); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancelCause(deadline(t, ctx, 30*time.Second))
	why := errors.New("the caller gave up")
	admin := adminAPI(t, g.addr)
	go func() { // give up once the slot is booked and its answer had time to arrive
		for wctx.Err() == nil {
			res, err := admin.GetNode(wctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: tk.ID()}))
			if err == nil && res.Msg.Node.Resources["slow"].GetUsed() == 2 {
				time.Sleep(500 * time.Millisecond)
				cancel(why)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	b, err := Wait(wctx, "slow", 1)
	if !errors.Is(err, why) || b.Status != Scheduled {
		t.Fatalf("wait: %+v, %v; want scheduled and ended with the context's cause", b, err)
	}
	if u := used(t, g.addr, tk.ID(), "slow"); u != 2 {
		t.Fatalf("%d slow charged, want the booked slot kept", u)
	}
}

// A token bucket books nothing: Wait sleeps until its window ends and asks
// again.
func TestWaitSleepsOutAFullWindow(t *testing.T) {
	t.Parallel()
	g, ctx, tk := waitTask(t)
	if _, err := Consume(ctx, "window", 2); err != nil {
		t.Fatal(err)
	}
	b, err := Wait(deadline(t, ctx, 5*time.Second), "window", 1)
	if err != nil || b.Status != Admitted {
		t.Fatalf("wait on a full window: %+v, %v; want admitted in the next window", b, err)
	}
	if u := used(t, g.addr, tk.ID(), "window"); u != 3 {
		t.Fatalf("%d window charged, want 3", u)
	}
}

// Wait asks for no more than the context's deadline, or DefaultWait
// without one, and repeats a call whose reply was lost with the same
// request id, so the slot is booked once.
func TestWaitBoundsItsAskAndRetriesWithTheSameID(t *testing.T) {
	t.Parallel()
	rt := newRecordingTransport()
	g, ctx, tk := waitTask(t, WithHTTPClient(&http.Client{Transport: rt}))
	if _, err := Wait(ctx, "calls", 1); err != nil {
		t.Fatal(err)
	}
	rt.loseNext("Consume")
	b, err := Wait(deadline(t, ctx, 2*time.Second), "calls", 1)
	if err != nil {
		t.Fatalf("wait whose first reply was lost: %+v, %v", b, err)
	}
	ids, waits := rt.consumes()
	if len(ids) != 3 || ids[1] != ids[2] || ids[0] == ids[1] {
		t.Fatalf("consume request ids %q, want a first wait and a second sent twice with one id", ids)
	}
	if waits[0] <= DefaultWait-time.Second || waits[0] > DefaultWait {
		t.Fatalf("a wait without a deadline asked for %s, want DefaultWait (%s)", waits[0], DefaultWait)
	}
	if waits[1] > 2*time.Second || waits[1] != waits[2] {
		t.Fatalf("a wait with 2s left asked for %s, then %s", waits[1], waits[2])
	}
	if u := used(t, g.addr, tk.ID(), "calls"); u != 2 {
		t.Fatalf("%d calls charged for 2 waits", u)
	}
}

func TestWaitWantsAnAmount(t *testing.T) {
	t.Parallel()
	_, ctx, _ := waitTask(t)
	if _, err := Wait(ctx, "calls", 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("wait for 0: %v, want ErrInvalid", err)
	}
	if _, err := Wait(context.Background(), "calls", 1); !errors.Is(err, ErrNoTask) {
		t.Fatalf("wait without a task: %v, want ErrNoTask", err)
	}
}
