package gubernator

import (
	"net/http"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// engineTenant is a real engine at now with a tenant "acme".
func engineTenant(t *testing.T, now time.Time) (*engine.Engine, engine.ID) {
	t.Helper()
	eng := engine.New(engine.Options{Clock: fixedClock{now}})
	tenant, err := eng.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return eng, tenant.ID
}

// A leaky bucket of 3 per second leaks one hit every 333⅓ ms: the wait
// for the next hit is 334 ms on the wire, rounded up to the millisecond,
// not to a second, whether the hit is booked or refused.
func TestLeakyBucketWaitIsInMilliseconds(t *testing.T) {
	now := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	eng, tenant := engineTenant(t, now)
	lim := NewLimiter(eng, tenant, "gubernator")
	c := Check{Name: "n", Key: "k", Hits: 1, Limit: 3, Window: time.Second, Calendar: NoCalendar, Leaky: true, Burst: 1}
	if v, _, err := lim.Limit(c); err != nil || v.Status != pb.Status_UNDER_LIMIT {
		t.Fatalf("the first hit: %+v, %v", v, err)
	}
	c.MaxWait = 100 * time.Millisecond
	v, _, err := lim.Limit(c)
	if err != nil || v.Status != pb.Status_OVER_LIMIT || answerOf(v).RetryAfter != 334 {
		t.Fatalf("a hit that would wait past max_wait: %+v (retry_after %d ms), %v; want OVER_LIMIT after 334 ms", v, answerOf(v).RetryAfter, err)
	}
	c.MaxWait = time.Second
	v, _, err = lim.Limit(c)
	if err != nil || v.Status != pb.Status_SCHEDULED || answerOf(v).RetryAfter != 334 {
		t.Fatalf("a hit within max_wait: %+v (retry_after %d ms), %v; want SCHEDULED in 334 ms", v, answerOf(v).RetryAfter, err)
	}
}

// A batch whose valid request made events and whose invalid one made none
// answers only once the record holds every event the batch made.
func TestABatchWaitsForEveryEventItMade(t *testing.T) {
	eng, tenant := engineTenant(t, time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC))
	f := startWith(t, NewLimiter(eng, tenant, "gubernator"))
	for _, body := range []string{
		`{"requests":[{"name":"n","unique_key":"a","hits":1,"limit":5,"duration":1000},{"name":"n","unique_key":"bad","hits":-1,"limit":5,"duration":1000}]}`,
		`{"requests":[{"name":"n","unique_key":"bad","hits":-1,"limit":5,"duration":1000},{"name":"n","unique_key":"b","hits":1,"limit":5,"duration":1000}]}`,
	} {
		before := eng.Seq()
		status, got := post(t, f, http.MethodPost, "/v1/GetRateLimits", keyTenant, body)
		if status != http.StatusOK {
			t.Fatalf("status %d: %v", status, got)
		}
		f.record.mu.Lock()
		waited := f.record.waited
		f.record.mu.Unlock()
		if after := eng.Seq(); after <= before || waited != after {
			t.Fatalf("the batch made events %d to %d and waited for %d", before+1, after, waited)
		}
	}
}

// answerOf is v's wire form, as an answer carries it.
func answerOf(v Verdict) *pb.RateLimitResp {
	r := &pb.RateLimitResp{}
	v.answer(r, "")
	return r
}
