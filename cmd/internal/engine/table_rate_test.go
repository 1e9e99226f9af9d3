package engine

import (
	"errors"
	"testing"
	"time"
)

// rateWorld is a tenant and a task under it, with the daemon's call.
type rateWorld struct {
	*fixture
	tenant, task ID
}

func newRateWorld(t *testing.T, tenantRates, taskRates map[string]Rate) *rateWorld {
	f := newFixture(t)
	w := &rateWorld{fixture: f}
	w.tenant = f.tenant(Spec{Name: "acme", Rates: tenantRates})
	w.task = f.sysCreate(w.tenant, Spec{Name: "task", Rates: taskRates})
	return w
}

// take consumes n on node id with options and returns the result or error.
func (w *rateWorld) take(id ID, n int64, o ConsumeOptions) (ConsumeResult, error) {
	return w.e.ConsumeWith(w.sys(), id, "http", n, o)
}

func (w *rateWorld) peek(id ID) Tightest {
	w.t.Helper()
	res, err := w.e.ConsumeWith(w.sys(), id, "http", 0, ConsumeOptions{})
	if err != nil {
		w.t.Fatalf("peek: %v", err)
	}
	return res.Tightest
}

func leaky(limit int64, period time.Duration, burst int64) map[string]Rate {
	return map[string]Rate{"http": {Limit: limit, Period: period, Burst: burst, Algorithm: LeakyBucket}}
}

func tokens(limit int64, period time.Duration) map[string]Rate {
	return map[string]Rate{"http": {Limit: limit, Period: period}}
}

func denial(t *testing.T, err error) *DeniedError {
	t.Helper()
	var d *DeniedError
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want a denial", err)
	}
	return d
}

// TestGubernatorScheduleExample is the documented example: 10 per minute,
// burst 10, max_wait 120000 ms, 31 requests at once.
func TestGubernatorScheduleExample(t *testing.T) {
	w := newRateWorld(t, leaky(10, time.Minute, 10), nil)
	for i := int64(1); i <= 31; i++ {
		res, err := w.take(w.tenant, 1, ConsumeOptions{MaxWait: 120 * time.Second})
		switch {
		case i <= 10:
			if err != nil || res.Status != Admitted || res.RetryAfter != 0 {
				t.Fatalf("request %d: %+v %v, want admitted now", i, res, err)
			}
		case i <= 30:
			want := time.Duration(i-10) * 6 * time.Second
			if err != nil || res.Status != Scheduled || res.RetryAfter != want || res.Remaining != 0 {
				t.Fatalf("request %d: %+v %v, want scheduled in %s", i, res, err, want)
			}
		default:
			d := denial(t, err)
			if d.RetryAfter != 126*time.Second || d.NeverFits || d.Remaining != 0 || errors.Is(err, ErrNeverFits) {
				t.Fatalf("request 31: %+v, want over limit with 126s", d)
			}
		}
	}
	// Request 31 was not charged: the next one with a long enough wait gets 126s.
	res, err := w.take(w.tenant, 1, ConsumeOptions{MaxWait: 200 * time.Second})
	if err != nil || res.RetryAfter != 126*time.Second {
		t.Fatalf("after the refusal: %+v %v, want scheduled in 126s", res, err)
	}
	// A plain consume on the bucket in debt is refused.
	w.clock.Advance(60 * time.Second)
	if d := denial(t, w.e.Consume(w.sys(), w.tenant, "http", 1)); d.Remaining != 0 || d.RetryAfter != 72*time.Second {
		t.Fatalf("plain consume in debt: %+v, want refused with 72s", d)
	}
}

// TestLeakyAtFixedInstants checks the GCRA with a unit that takes a third of
// a second: the remainders add up exactly, neither rounded up nor down.
func TestLeakyAtFixedInstants(t *testing.T) {
	w := newRateWorld(t, leaky(3, time.Second, 0), nil)
	start := w.clock.Now().UnixNano()
	steps := []struct {
		at     time.Duration // since start
		n      int64
		ok     bool
		retry  time.Duration
		remain int64
		reset  time.Duration
	}{
		{0, 3, true, 0, 0, time.Second},
		{0, 1, false, 333333334, 0, 333333334},
		{333333333, 1, false, 1, 0, 333333334},
		{999999999, 2, true, 0, 0, 1666666667},
		{999999999, 1, false, 1, 0, time.Second},
		{time.Second, 1, true, 0, 0, 2 * time.Second},
		{2 * time.Second, 3, true, 0, 0, 3 * time.Second},
		{2500 * time.Millisecond, 3, false, 500 * time.Millisecond, 1, 3 * time.Second},
		{3 * time.Second, 3, true, 0, 0, 4 * time.Second},
		{10 * time.Second, 0, true, 0, 3, 10 * time.Second},
	}
	for i, s := range steps {
		w.clock.Set(time.Unix(0, start+int64(s.at)).UTC())
		res, err := w.take(w.tenant, s.n, ConsumeOptions{})
		if s.ok {
			if err != nil || res.Remaining != s.remain || res.Reset != start+int64(s.reset) {
				t.Fatalf("step %d: %+v %v, want remaining %d reset +%d", i, res, err, s.remain, s.reset)
			}
			continue
		}
		d := denial(t, err)
		if d.RetryAfter != s.retry || d.Remaining != s.remain || d.Reset != start+int64(s.reset) || d.Rate == nil {
			t.Fatalf("step %d: %+v, want retry %d remaining %d reset +%d", i, d, s.retry, s.remain, s.reset)
		}
	}
}

// TestLeakyKeepsRemaindersAtHighRates consumes as fast as the bucket allows,
// every millisecond for ten seconds: exactly burst + 10 × limit pass.
func TestLeakyKeepsRemaindersAtHighRates(t *testing.T) {
	w := newRateWorld(t, leaky(7, time.Second, 0), nil)
	passed := 0
	for ms := 0; ms <= 10_000; ms++ {
		for w.e.Consume(w.sys(), w.tenant, "http", 1) == nil {
			passed++
		}
		w.clock.Advance(time.Millisecond)
	}
	if passed != 7+70 {
		t.Fatalf("%d passed in 10 s at 7/s with burst 7, want 77", passed)
	}
}

func TestTokenBucketAtFixedInstants(t *testing.T) {
	w := newRateWorld(t, tokens(3, time.Second), nil)
	start := w.clock.Now().UnixNano()
	if p := w.peek(w.task); p.Remaining != 3 || p.Reset != start+int64(time.Second) || !p.Rate || p.Node != w.tenant {
		t.Fatalf("peek on a fresh bucket: %+v", p)
	}
	steps := []struct {
		at     time.Duration
		n      int64
		ok     bool
		retry  time.Duration
		remain int64
		reset  time.Duration
	}{
		{0, 2, true, 0, 1, time.Second},
		{500 * time.Millisecond, 2, false, 500 * time.Millisecond, 1, time.Second},
		{500 * time.Millisecond, 1, true, 0, 0, time.Second},
		{999 * time.Millisecond, 1, false, time.Millisecond, 0, time.Second},
		{time.Second, 3, true, 0, 0, 2 * time.Second},
		{1500 * time.Millisecond, 1, false, 500 * time.Millisecond, 0, 2 * time.Second},
		{5 * time.Second, 1, true, 0, 2, 6 * time.Second},
	}
	for i, s := range steps {
		w.clock.Set(time.Unix(0, start+int64(s.at)).UTC())
		res, err := w.take(w.task, s.n, ConsumeOptions{})
		if s.ok {
			if err != nil || res.Remaining != s.remain || res.Reset != start+int64(s.reset) {
				t.Fatalf("step %d: %+v %v", i, res, err)
			}
			continue
		}
		d := denial(t, err)
		if d.RetryAfter != s.retry || d.Remaining != s.remain || d.Reset != start+int64(s.at+s.retry) {
			t.Fatalf("step %d: %+v", i, d)
		}
	}
	// A token bucket books nothing: with max_wait it answers the wait to its
	// window's end, and more than its limit never fits.
	if d := denial(t, second(w.take(w.task, 3, ConsumeOptions{MaxWait: time.Hour}))); d.RetryAfter != time.Second || d.NeverFits {
		t.Fatalf("token bucket with max_wait: %+v", d)
	}
	_, err := w.take(w.task, 4, ConsumeOptions{MaxWait: time.Hour})
	if !errors.Is(err, ErrNeverFits) {
		t.Fatalf("4 on a 3 per second bucket with max_wait: %v, want never fits", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestBurstChanges follows the documented rule: remaining moves by the
// change of burst, never below zero; fractions are kept.
func TestBurstChanges(t *testing.T) {
	type step struct {
		burst, limit int64
		advance      time.Duration
		want         int64
	}
	cases := []struct {
		name  string
		spent int64
		wait  time.Duration
		steps []step
	}{
		{"raising 5 to 8 with nothing remaining leaves 3", 5, 0, []step{{8, 5, 0, 3}}},
		{"lowering 5 to 3 with 2.5 remaining leaves 0.5", 3, 500 * time.Millisecond,
			[]step{{3, 5, 0, 0}, {3, 5, 499 * time.Millisecond, 0}, {3, 5, time.Millisecond, 1}}},
		{"changing the limit alone (burst 0) moves remaining the same way", 5, 0, []step{{0, 8, 0, 3}}},
		{"lowering below what is missing leaves 0, then refills", 2, 0, []step{{1, 5, 0, 0}, {1, 5, time.Second, 1}}},
		{"the same rate again changes nothing", 2, 250 * time.Millisecond, []step{{5, 5, 0, 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newRateWorld(t, leaky(5, 5*time.Second, 5), nil)
			if _, err := w.take(w.tenant, tc.spent, ConsumeOptions{}); err != nil {
				t.Fatal(err)
			}
			w.clock.Advance(tc.wait)
			for i, s := range tc.steps {
				w.clock.Advance(s.advance)
				r := Rate{Limit: s.limit, Period: 5 * time.Second, Burst: s.burst, Algorithm: LeakyBucket}
				must(t, w.e.SetRate(w.sys(), w.tenant, "http", &r))
				if got := w.peek(w.tenant).Remaining; got != s.want {
					t.Fatalf("step %d: remaining %d, want %d", i, got, s.want)
				}
			}
		})
	}
}

// TestDebtKeepsBookedSlots books slots, then raises and lowers the limit: a
// newcomer is always booked after the last slot already promised.
func TestDebtKeepsBookedSlots(t *testing.T) {
	cases := []struct {
		name  string
		rate  Rate
		first time.Duration // the newcomer's slot
	}{
		{"unchanged", Rate{Limit: 10, Period: time.Minute, Algorithm: LeakyBucket}, 36 * time.Second},
		{"raised to 20 per minute", Rate{Limit: 20, Period: time.Minute, Algorithm: LeakyBucket}, 33 * time.Second},
		{"lowered to 5 per minute", Rate{Limit: 5, Period: time.Minute, Algorithm: LeakyBucket}, 42 * time.Second},
		{"burst lowered to 1", Rate{Limit: 10, Period: time.Minute, Burst: 1, Algorithm: LeakyBucket}, 36 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newRateWorld(t, leaky(10, time.Minute, 10), nil)
			for i := range 15 {
				res, err := w.take(w.tenant, 1, ConsumeOptions{MaxWait: time.Minute})
				if err != nil || i >= 10 && res.RetryAfter != time.Duration(i-9)*6*time.Second {
					t.Fatalf("booking %d: %+v %v", i, res, err)
				}
			}
			if !w.describe(w.tenant).Rates["http"].Debt {
				t.Fatal("describe does not show the debt")
			}
			must(t, w.e.SetRate(w.sys(), w.tenant, "http", &tc.rate))
			if err := w.e.Consume(w.sys(), w.tenant, "http", 1); !errors.Is(err, ErrDenied) {
				t.Fatalf("plain consume in debt after the change: %v", err)
			}
			res, err := w.take(w.tenant, 1, ConsumeOptions{MaxWait: time.Hour})
			if err != nil || res.RetryAfter != tc.first {
				t.Fatalf("newcomer: %+v %v, want its slot at %s (after the last booked at 30s)", res, err, tc.first)
			}
		})
	}
}

func TestResetRemaining(t *testing.T) {
	w := newRateWorld(t, nil, leaky(2, time.Minute, 0))
	for range 5 {
		if _, err := w.take(w.task, 1, ConsumeOptions{MaxWait: 5 * time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	s := w.session(w.tenant, time.Minute)
	if err := w.e.ResetRate(&Call{Session: s}, w.tenant, "http"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("reset of the session's own scope: %v, want forbidden", err)
	}
	if err := w.e.ResetRate(&Call{Session: s}, w.task, "cpu"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("reset of a resource without a rate cap: %v, want invalid", err)
	}
	must(t, w.e.ResetRate(&Call{Session: s}, w.task, "http"))
	if p := w.peek(w.task); p.Remaining != 2 || p.Reset != w.clock.Now().UnixNano() {
		t.Fatalf("after reset: %+v, want a full bucket", p)
	}
	if _, err := w.take(w.task, 2, ConsumeOptions{}); err != nil {
		t.Fatalf("plain consume after the reset: %v", err)
	}
}

func TestDrainOverLimit(t *testing.T) {
	for _, drain := range []bool{false, true} {
		w := newRateWorld(t, tokens(10, time.Minute), leaky(100, time.Minute, 0))
		if _, err := w.take(w.task, 4, ConsumeOptions{}); err != nil {
			t.Fatal(err)
		}
		seq := w.e.Seq()
		if _, err := w.take(w.task, 8, ConsumeOptions{Drain: drain}); !errors.Is(err, ErrDenied) {
			t.Fatalf("drain=%v: %v, want denied", drain, err)
		}
		want, events := int64(6), uint64(0)
		if drain {
			want, events = 0, 1
		}
		if got := w.describe(w.tenant).Rates["http"].Remaining; got != want || w.e.Seq() != seq+events {
			t.Fatalf("drain=%v: remaining %d after %d events, want %d after %d", drain, got, w.e.Seq()-seq, want, events)
		}
		if got := w.describe(w.task).Rates["http"].Remaining; got != 96 {
			t.Fatalf("drain=%v: the task's bucket, which had room, has %d, want 96", drain, got)
		}
		w.clock.Advance(time.Minute)
		if got := w.peek(w.tenant).Remaining; got != 10 {
			t.Fatalf("drain=%v: after the window, %d remaining, want 10", drain, got)
		}
	}
}

// TestChainAllOrNothing: a rate cap anywhere on the chain refuses the whole
// charge; quotas, other buckets and usage stay as they were.
func TestChainAllOrNothing(t *testing.T) {
	w := newRateWorld(t, leaky(5, time.Second, 0), tokens(100, time.Minute))
	must(t, w.e.SetQuota(w.sys(), RootID, "http", ptr(1000)))
	res, err := w.take(w.task, 4, ConsumeOptions{})
	if err != nil || !res.Rate || res.Node != w.tenant || res.Remaining != 1 || res.Limit != 5 {
		t.Fatalf("first charge: %+v %v, want the tenant's bucket as the tightest with 1 left", res, err)
	}
	before := w.e.Dump()
	d := denial(t, second(w.take(w.task, 2, ConsumeOptions{})))
	if d.Node != w.tenant || d.RetryAfter != 200*time.Millisecond {
		t.Fatalf("denial: %+v", d)
	}
	if after := w.e.Dump(); !equalSnapshots(before, after) {
		t.Fatalf("a refused charge changed the state:\n%s", diffSnapshots(after, before))
	}
	if got := w.used(RootID, "http"); got != 4 {
		t.Fatalf("root used %d, want 4", got)
	}
	// A quota that refuses makes no wait help.
	must(t, w.e.SetQuota(w.sys(), w.task, "http", ptr(4)))
	if _, err := w.take(w.task, 1, ConsumeOptions{MaxWait: time.Minute}); !errors.Is(err, ErrNeverFits) {
		t.Fatalf("quota refusal with max_wait: %v, want never fits", err)
	}
	if p := w.peek(w.task); p.Rate || p.Node != w.task || p.Remaining != 0 || p.Reset != 0 {
		t.Fatalf("peek: %+v, want the task's spent quota", p)
	}
}

// TestScheduledBooksEveryCap: a slot booked because of one bucket also holds
// a unit of every other bucket on the chain at that slot.
func TestScheduledBooksEveryCap(t *testing.T) {
	w := newRateWorld(t, leaky(1, time.Second, 1), leaky(1, 100*time.Millisecond, 1))
	if _, err := w.take(w.task, 1, ConsumeOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := w.take(w.task, 1, ConsumeOptions{MaxWait: time.Minute})
	if err != nil || res.Status != Scheduled || res.RetryAfter != time.Second {
		t.Fatalf("booking: %+v %v", res, err)
	}
	// The task's own bucket, ten per second, holds the unit at its slot at
	// 1s: half a second later it is still in debt, not full.
	w.clock.Advance(500 * time.Millisecond)
	if r := w.describe(w.task).Rates["http"]; !r.Debt || r.Remaining != 0 || r.Reset != w.clock.Now().UnixNano()+int64(600*time.Millisecond) {
		t.Fatalf("the task's bucket half a second later: %+v, want in debt until 1.1s", r)
	}
}

func TestMaxScheduleWaitCeiling(t *testing.T) {
	w := newRateWorld(t, leaky(10, time.Minute, 10), nil)
	set := DefaultSettings()
	set.MaxScheduleWait = 10 * time.Second
	must(t, w.e.Configure(w.sys(), set))
	for range 10 {
		if _, err := w.take(w.tenant, 1, ConsumeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := w.take(w.tenant, 1, ConsumeOptions{MaxWait: time.Hour}); err != nil || res.RetryAfter != 6*time.Second {
		t.Fatalf("within the ceiling: %+v %v", res, err)
	}
	d := denial(t, second(w.take(w.tenant, 1, ConsumeOptions{MaxWait: time.Hour})))
	if d.RetryAfter != 12*time.Second {
		t.Fatalf("beyond the ceiling: %+v, want refused with the 12s it needed", d)
	}
	set.MaxScheduleWait = 0
	must(t, w.e.Configure(w.sys(), set))
	if _, err := w.take(w.tenant, 1, ConsumeOptions{MaxWait: time.Hour}); !errors.Is(err, ErrDenied) {
		t.Fatalf("with scheduling off: %v", err)
	}
}

func TestRateRequestIDs(t *testing.T) {
	w := newRateWorld(t, leaky(1, time.Second, 1), nil)
	s := w.session(w.tenant, 0)
	call := func(req string, o ConsumeOptions) (ConsumeResult, error) {
		return w.e.ConsumeWith(&Call{Session: s, Request: req}, w.task, "http", 1, o)
	}
	if _, err := call("a", ConsumeOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := call("b", ConsumeOptions{MaxWait: time.Minute})
	if err != nil || first.RetryAfter != time.Second {
		t.Fatalf("booking: %+v %v", first, err)
	}
	w.clock.Advance(400 * time.Millisecond)
	seq := w.e.Seq()
	again, err := call("b", ConsumeOptions{MaxWait: time.Minute})
	if err != nil || again.Status != Scheduled || again.RetryAfter != 600*time.Millisecond || w.e.Seq() != seq {
		t.Fatalf("repeat: %+v %v, want the same slot 600ms away and nothing applied", again, err)
	}
	if _, err := call("b", ConsumeOptions{MaxWait: 2 * time.Minute}); !errors.Is(err, ErrRequestMismatch) {
		t.Fatalf("same id, other max_wait: %v", err)
	}
	// A refusal that drains is recorded but not remembered: its retry is
	// evaluated afresh.
	if _, err := call("c", ConsumeOptions{Drain: true}); !errors.Is(err, ErrDenied) {
		t.Fatalf("drain: %v", err)
	}
	must(t, w.e.ResetRate(w.sys(), w.tenant, "http"))
	seq = w.e.Seq()
	if res, err := call("c", ConsumeOptions{Drain: true}); err != nil || res.Status != Admitted || w.e.Seq() != seq+1 {
		t.Fatalf("retry of a refused drain: %+v %v, want admitted and charged", res, err)
	}
}

func TestRateValidation(t *testing.T) {
	w := newRateWorld(t, nil, nil)
	cases := []struct {
		name  string
		rate  Rate
		field string
	}{
		{"no limit", Rate{Period: time.Second}, "rate.limit"},
		{"no period", Rate{Limit: 1}, "rate.period"},
		{"period too short", Rate{Limit: 1, Period: time.Microsecond}, "rate.period"},
		{"burst on a token bucket", Rate{Limit: 1, Period: time.Second, Burst: 3}, "rate.burst"},
		{"negative burst", Rate{Limit: 1, Period: time.Second, Burst: -1, Algorithm: LeakyBucket}, "rate.burst"},
		{"burst refills too slowly", Rate{Limit: 1, Period: 300 * 24 * time.Hour, Burst: 100, Algorithm: LeakyBucket}, "rate.burst"},
		{"unknown algorithm", Rate{Limit: 1, Period: time.Second, Algorithm: 7}, "rate.algorithm"},
		{"zone without calendar", Rate{Limit: 1, Period: time.Second, Zone: "UTC"}, "rate.zone"},
		{"calendar with period", Rate{Limit: 1, Period: time.Second, Calendar: Day}, "rate.calendar"},
		{"calendar on a leaky bucket", Rate{Limit: 1, Calendar: Day, Algorithm: LeakyBucket}, "rate.calendar"},
		{"unknown zone", Rate{Limit: 1, Calendar: Day, Zone: "Mars/Olympus"}, "rate.zone"},
		{"the host's zone", Rate{Limit: 1, Calendar: Day, Zone: "Local"}, "rate.zone"},
		{"unknown calendar", Rate{Limit: 1, Calendar: 9}, "rate.calendar"},
	}
	for _, tc := range cases {
		var ie *InvalidError
		err := w.e.SetRate(w.sys(), w.task, "http", &tc.rate)
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%s: %v, want an invalid %s", tc.name, err, tc.field)
		}
	}
	opts := []struct {
		name string
		n    int64
		o    ConsumeOptions
	}{
		{"negative amount", -1, ConsumeOptions{}},
		{"negative max_wait", 1, ConsumeOptions{MaxWait: -time.Second}},
		{"peek with max_wait", 0, ConsumeOptions{MaxWait: time.Second}},
		{"peek with drain", 0, ConsumeOptions{Drain: true}},
	}
	for _, tc := range opts {
		if _, err := w.take(w.task, tc.n, tc.o); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want invalid", tc.name, err)
		}
	}
	bad := Settings{MaxScheduleWait: 48 * time.Hour}
	if err := w.e.Configure(w.sys(), bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("a ceiling of two days: %v, want invalid", err)
	}
}

// TestRateConsumeAllocations: a consume through a chain with a rate cap at
// every level allocates only its event; a peek allocates nothing.
func TestRateConsumeAllocations(t *testing.T) {
	w := newRateWorld(t, leaky(maxRateLimit, time.Millisecond, 0), tokens(maxRateLimit, time.Second))
	r := Rate{Limit: maxRateLimit, Period: time.Millisecond, Algorithm: LeakyBucket}
	must(t, w.e.SetRate(w.sys(), RootID, "http", &r))
	c := &Call{}
	consume := testing.AllocsPerRun(200, func() {
		w.clock.Advance(time.Microsecond)
		if _, err := w.e.ConsumeWith(c, w.task, "http", 1, ConsumeOptions{MaxWait: time.Second}); err != nil {
			t.Fatal(err)
		}
	})
	peek := testing.AllocsPerRun(200, func() {
		if _, err := w.e.ConsumeWith(c, w.task, "http", 0, ConsumeOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if consume > 1 || peek > 0 {
		t.Fatalf("a consume allocates %.1f times and a peek %.1f, want 1 and 0", consume, peek)
	}
}
