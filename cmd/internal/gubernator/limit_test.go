package gubernator

import (
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	pb "governor.dev/governor/internal/gen/gubernator/v1"
)

// fixedClock is an engine clock that stands still.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// TestEngineLimiter maps checks onto a real engine at a fixed instant
// (a Friday, 2027-01-15 08:00 UTC) and the engine's answers back.
func TestEngineLimiter(t *testing.T) {
	now := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	base := Check{Name: "n", Hits: 1, Limit: 10, Window: time.Minute, Calendar: NoCalendar, Burst: 10}
	tests := []struct {
		name  string
		edit  func(c *Check)
		quota bool // the tenant has a quota of 3 on the resource
		want  Verdict
	}{
		{"token bucket", nil, false,
			Verdict{Status: pb.Status_UNDER_LIMIT, Limit: 10, Remaining: 9, Reset: now.Add(time.Minute)}},
		{"calendar day ends at midnight UTC", func(c *Check) { c.Window, c.Calendar = 0, Day }, false,
			Verdict{Status: pb.Status_UNDER_LIMIT, Limit: 10, Remaining: 9, Reset: time.Date(2027, 1, 16, 0, 0, 0, 0, time.UTC)}},
		{"calendar week ends on Monday", func(c *Check) { c.Window, c.Calendar = 0, Week }, false,
			Verdict{Status: pb.Status_UNDER_LIMIT, Limit: 10, Remaining: 9, Reset: time.Date(2027, 1, 18, 0, 0, 0, 0, time.UTC)}},
		{"leaky bucket with a burst", func(c *Check) { c.Leaky, c.Burst, c.Hits = true, 4, 2 }, false,
			Verdict{Status: pb.Status_UNDER_LIMIT, Limit: 10, Remaining: 2, Reset: now.Add(12 * time.Second)}},
		{"more than the burst never fits", func(c *Check) { c.Leaky, c.Burst, c.Hits, c.MaxWait = true, 4, 5, time.Minute }, false,
			Verdict{Status: pb.Status_NEVER_FITS, Limit: 10, Remaining: 4, Reset: now}},
		{"more than the burst without max_wait is over the limit", func(c *Check) { c.Leaky, c.Burst, c.Hits = true, 4, 5 }, false,
			Verdict{Status: pb.Status_OVER_LIMIT, Limit: 10, Remaining: 4, Reset: now}},
		{"a quota above never refills", func(c *Check) { c.Hits = 5 }, true,
			Verdict{Status: pb.Status_OVER_LIMIT, Limit: 10, Remaining: 3}},
		{"a quota above with max_wait never fits", func(c *Check) { c.Leaky, c.Hits, c.MaxWait = true, 5, time.Minute }, true,
			Verdict{Status: pb.Status_NEVER_FITS, Limit: 10, Remaining: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := engine.New(engine.Options{Clock: fixedClock{now}})
			spec := engine.Spec{Name: "acme"}
			if tt.quota {
				spec.Quotas = map[string]int64{"gubernator": 3}
			}
			tenant, err := eng.Create(&engine.Call{}, engine.RootID, spec)
			if err != nil {
				t.Fatal(err)
			}
			c := base
			c.Key = tt.name
			if tt.edit != nil {
				tt.edit(&c)
			}
			got, seq, err := NewLimiter(eng, tenant.ID, "gubernator").Limit(c)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Reset.Equal(tt.want.Reset) || got.Reset.IsZero() != tt.want.Reset.IsZero() {
				t.Errorf("reset %v, want %v", got.Reset, tt.want.Reset)
			}
			got.Reset, tt.want.Reset = time.Time{}, time.Time{}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if seq < 2 {
				t.Errorf("seq %d: the answer must wait for the key's events", seq)
			}
		})
	}
}

// A leaky bucket's DRAIN_OVER_LIMIT refusal reports the bucket as the drain
// left it: the reset time the same hits are told right after.
func TestLeakyDrainReportsTheResetAfterTheDrain(t *testing.T) {
	now := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	eng := engine.New(engine.Options{Clock: fixedClock{now}})
	tenant, err := eng.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLimiter(eng, tenant.ID, "gubernator")
	c := Check{Name: "n", Key: "k", Hits: 3, Limit: 10, Window: time.Minute, Calendar: NoCalendar, Leaky: true, Burst: 4}
	if v, _, err := l.Limit(c); err != nil || v.Status != pb.Status_UNDER_LIMIT || v.Remaining != 1 {
		t.Fatalf("first hits: %+v %v", v, err)
	}
	drain := c
	drain.Drain = true
	drained, _, err := l.Limit(drain)
	if err != nil || drained.Status != pb.Status_OVER_LIMIT || drained.Remaining != 0 {
		t.Fatalf("drain: %+v %v", drained, err)
	}
	again, _, err := l.Limit(c)
	if err != nil || again.Status != pb.Status_OVER_LIMIT {
		t.Fatalf("the same hits after the drain: %+v %v", again, err)
	}
	if !drained.Reset.Equal(again.Reset) || !again.Reset.Equal(now.Add(18*time.Second)) {
		t.Fatalf("the drain reported reset %v, the same hits right after %v; want both %v",
			drained.Reset, again.Reset, now.Add(18*time.Second))
	}
}
