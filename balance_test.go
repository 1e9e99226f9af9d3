package governor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// newRateGovernord starts a governord whose tenant, team-a, has rates.
func newRateGovernord(t *testing.T, rates map[string]rate) *governord {
	t.Helper()
	cfg := testConfig(t.TempDir())
	cfg.Tenants[0].Rates = rates
	return newGovernordWith(t, cfg)
}

// Consume answers with the tightest cap on the chain: a quota never
// resets, a rate cap says when it is full again, and a peek reads the
// same without charging.
func TestConsumeBalanceNamesTheTightestCap(t *testing.T) {
	t.Parallel()
	g := newRateGovernord(t, map[string]rate{
		"calls": {Limit: 10, Per: time.Minute},
		"mail":  {Limit: 100, Per: time.Minute},
	})
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "balance", Quotas: map[string]int64{"tools": 5, "calls": 100, "mail": 4}})
	start := time.Now()
	cases := []struct {
		name     string
		resource string
		n        int64
		want     Balance // Reset and Node are checked apart
		used     int64   // the task's use after the call
	}{
		{"quota", "tools", 2, Balance{Remaining: 3, Capped: true, Limit: 5}, 2},
		{"quota peek", "tools", 0, Balance{Remaining: 3, Capped: true, Limit: 5}, 2},
		{"rate tighter than the quota", "calls", 3, Balance{Remaining: 7, Capped: true, Limit: 10, Rate: true}, 3},
		{"rate peek", "calls", 0, Balance{Remaining: 7, Capped: true, Limit: 10, Rate: true}, 3},
		{"quota tighter than the rate", "mail", 1, Balance{Remaining: 3, Capped: true, Limit: 4}, 1},
		{"uncapped", "files", 1, Balance{}, 1},
		{"uncapped peek", "files", 0, Balance{}, 1},
	}
	resets := map[string]time.Time{}
	for _, tc := range cases {
		b, err := Consume(ctx, tc.resource, tc.n)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		reset, node := b.Reset, b.Node
		b.Reset, b.Node = time.Time{}, 0
		switch {
		case !tc.want.Capped && node != 0:
			t.Errorf("%s: uncapped, yet node %d is named", tc.name, node)
		case tc.want.Capped && !tc.want.Rate && node != tk.ID():
			t.Errorf("%s: the task's quota is the tightest cap, yet node %d is named, not the task %d", tc.name, node, tk.ID())
		case tc.want.Rate && (node == 0 || node == tk.ID()):
			t.Errorf("%s: the tenant's rate cap is the tightest cap, yet node %d is named", tc.name, node)
		}
		if b != tc.want {
			t.Errorf("%s: balance %+v, want %+v", tc.name, b, tc.want)
		}
		switch {
		case !tc.want.Rate && !reset.IsZero():
			t.Errorf("%s: a quota resets at %s; it never does", tc.name, reset)
		case tc.want.Rate && (reset.Before(start) || reset.After(time.Now().Add(time.Minute))):
			t.Errorf("%s: the token bucket of a minute resets at %s, not within a minute of %s", tc.name, reset, start)
		case tc.want.Rate && !resets[tc.resource].IsZero() && !reset.Equal(resets[tc.resource]):
			t.Errorf("%s: the window's end moved from %s to %s", tc.name, resets[tc.resource], reset)
		}
		resets[tc.resource] = reset
		if u := used(t, g.addr, tk.ID(), tc.resource); u != tc.used {
			t.Errorf("%s: %d %s used, want %d", tc.name, u, tc.resource, tc.used)
		}
	}
}

// A refusal by a rate cap says so, what it admits now and the wait that
// would have been needed.
func TestConsumeDeniedByARateCap(t *testing.T) {
	t.Parallel()
	g := newRateGovernord(t, map[string]rate{"calls": {Limit: 2, Per: time.Minute}})
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "denied"})
	if _, err := Consume(ctx, "calls", 2); err != nil {
		t.Fatal(err)
	}
	_, err := Consume(ctx, "calls", 1)
	d := asDenied(t, err)
	if !d.Rate || d.Remaining != 0 || d.Limit != 2 || d.NeverFits || d.NodeName != "team-a" {
		t.Fatalf("denial %+v, want the tenant's rate cap of 2 with none left", d)
	}
	if d.RetryAfter <= 0 || d.RetryAfter > time.Minute || d.Reset.IsZero() {
		t.Fatalf("denial waits %s until %s, want the rest of the minute", d.RetryAfter, d.Reset)
	}
}

// asDenied returns err as a *DeniedError or fails the test.
func asDenied(t *testing.T, err error) *DeniedError {
	t.Helper()
	d, ok := err.(*DeniedError)
	if !ok {
		t.Fatalf("%v (%T), want a *DeniedError", err, err)
	}
	return d
}

// A task's own rate caps, set in its Spec, bound it and are reported as
// the tightest cap; a mistaken rate creates nothing.
func TestTaskRates(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "rated", Rates: map[string]Rate{
		"pages": {Limit: 2, Period: time.Hour, Algorithm: LeakyBucket},
		"mails": {Limit: 3, Calendar: Day, Zone: "Europe/Paris"},
	}})
	b, err := Consume(ctx, "pages", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Rate || b.Node != tk.ID() || b.Limit != 2 || b.Remaining != 0 {
		t.Fatalf("balance %+v, want the task's leaky bucket of 2 with none left", b)
	}
	if d := asDenied(t, consumeErr(ctx, "pages", 1)); !d.Rate || d.RetryAfter <= 0 || d.RetryAfter > 30*time.Minute {
		t.Fatalf("denial %+v, want the leaky bucket's wait for one unit (at most half an hour)", d)
	}
	b, err = Consume(ctx, "mails", 1)
	if err != nil {
		t.Fatal(err)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	if r := b.Reset.In(paris); r.Hour() != 0 || r.Minute() != 0 || !r.After(time.Now()) || r.Sub(time.Now()) > 25*time.Hour {
		t.Fatalf("a daily window in Paris resets at %s, want the next midnight there", r)
	}
	_, _, err = c.NewTask(context.Background(), Spec{Name: "bad", Rates: map[string]Rate{"pages": {Limit: 0, Period: time.Second}}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("a rate of 0 per second: %v, want ErrInvalid", err)
	}
}

func consumeErr(ctx context.Context, resource string, n int64) error {
	_, err := Consume(ctx, resource, n)
	return err
}
