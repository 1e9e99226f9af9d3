package governor

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// nested runs three Retry loops inside each other, each allowing three
// attempts, around a call that always fails, and counts the calls.
func nested(ctx context.Context) (int64, error) {
	var calls atomic.Int64
	flaky := errors.New("flaky")
	fast := Backoff(time.Microsecond, time.Millisecond)
	err := Retry(ctx, func(ctx context.Context) error {
		return Retry(ctx, func(ctx context.Context) error {
			return Retry(ctx, func(context.Context) error {
				calls.Add(1)
				return flaky
			}, Attempts(3), fast)
		}, Attempts(3), fast)
	}, Attempts(3), fast)
	return calls.Load(), err
}

func TestRetryBudgetIsSharedByNestedLoops(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)

	ctx, _ := task(t, c, Spec{Name: "unbounded"})
	calls, err := nested(ctx)
	if calls != 27 || err == nil || errors.Is(err, ErrRetryBudget) {
		t.Fatalf("without a retry budget: %d calls, %v; want 27 and the last error", calls, err)
	}

	ctx, tk := task(t, c, Spec{Name: "bounded", Quotas: map[string]int64{"retry": 4}})
	calls, err = nested(ctx)
	if calls != 5 {
		t.Fatalf("with a retry budget of 4: %d calls, want 5 (the first attempt and 4 retries)", calls)
	}
	if !errors.Is(err, ErrRetryBudget) || !errors.Is(err, ErrDenied) || err.Error()[:5] != "flaky" {
		t.Fatalf("with a spent budget: %v, want the last error marked ErrRetryBudget", err)
	}
	if u := used(t, g.addr, tk.ID(), "retry"); u != 4 {
		t.Fatalf("%d retry units used, want 4", u)
	}
}

func TestRetryStopsOnFinalErrors(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "final"})
	calls := 0
	err := Retry(ctx, func(context.Context) error {
		calls++
		return &DeniedError{msg: "denied"}
	})
	if calls != 1 || !errors.Is(err, ErrDenied) {
		t.Fatalf("a denial was retried: %d calls, %v", calls, err)
	}
	calls = 0
	err = Retry(ctx, func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("transient")
		}
		return nil
	}, Backoff(time.Microsecond, time.Microsecond))
	if calls != 3 || err != nil {
		t.Fatalf("retry until success: %d calls, %v", calls, err)
	}
	if u := used(t, g.addr, tk.ID(), "retry"); u != 2 {
		t.Fatalf("%d retry units used for 2 retries", u)
	}
	if err := Retry(context.Background(), func(context.Context) error { return errors.New("x") }); !errors.Is(err, ErrRetryBudget) || !errors.Is(err, ErrNoTask) {
		t.Fatalf("a retry without a task: %v, want refused with ErrNoTask", err)
	}
}

// When the budget is spent in an inner loop, every enclosing loop returns
// at once, without a backoff or another charge, even when it would retry
// every error, and the error says that the retry was refused once.
func TestNestedRetriesStopAtOnceAndSaySoOnce(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "spent", Quotas: map[string]int64{"retry": 1}})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var inner atomic.Int64
	hour := Backoff(time.Hour, time.Hour) // an outer loop that retried would sleep past the deadline
	always := RetryIf(func(error) bool { return true })
	err := Retry(ctx, func(ctx context.Context) error {
		return Retry(ctx, func(ctx context.Context) error {
			return Retry(ctx, func(context.Context) error {
				inner.Add(1)
				return errors.New("flaky")
			}, Attempts(5), Backoff(time.Microsecond, time.Millisecond))
		}, Attempts(5), hour, always)
	}, Attempts(5), hour, always)
	if inner.Load() != 2 || !errors.Is(err, ErrRetryBudget) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%d inner calls, %v; want 2 and the spent budget at once", inner.Load(), err)
	}
	if n := strings.Count(err.Error(), "not retried"); n != 1 {
		t.Fatalf("the error says %d times that the retry was refused: %v", n, err)
	}
}
