package engine

import (
	"fmt"
	"testing"
	"time"
)

// TestEarliestInstantEndsLease sets a lease's session TTL, its hold and the
// deadlines above it at fixed instants, lets 30 seconds pass, and has the
// decisions taken by one of several callers. However they are taken, the
// lease ends by the earliest instant: expired when its session lapsed or its
// hold ran out first, revoked when its node's effective deadline passed
// first; at one instant the session comes first, then the deadline, then the
// hold.
func TestEarliestInstantEndsLease(t *testing.T) {
	const s = time.Second
	cases := []struct {
		name string
		ttl  time.Duration // the holder's session; 0: one hour
		beat time.Duration // when the holder renews its session; 0: never
		hold time.Duration // the lease's max hold; 0: none
		// deadlines from the start, 0: none: the task holding the lease, its
		// parent, and the task's sibling under that parent
		task, parent, sibling time.Duration
		want                  Outcome
	}{
		{name: "hold runs out before the deadline", hold: 10 * s, task: 20 * s, want: OutcomeExpired},
		{name: "deadline passes before the hold", hold: 20 * s, task: 10 * s, want: OutcomeRevoked},
		{name: "hold and deadline at one instant", hold: 10 * s, task: 10 * s, want: OutcomeRevoked},
		{name: "session lapses before the deadline", ttl: 10 * s, task: 20 * s, want: OutcomeExpired},
		{name: "deadline passes before the session lapses", ttl: 20 * s, task: 10 * s, want: OutcomeRevoked},
		{name: "session and deadline at one instant", ttl: 10 * s, task: 10 * s, want: OutcomeExpired},
		{name: "hold runs out before the parent's deadline", hold: 10 * s, parent: 20 * s, want: OutcomeExpired},
		{name: "parent's deadline passes before the hold", hold: 20 * s, parent: 10 * s, want: OutcomeRevoked},
		{name: "a sibling's earlier deadline does not end the parent early", hold: 15 * s, parent: 20 * s, sibling: 10 * s, want: OutcomeExpired},
		{name: "hold, then session, then deadline", ttl: 12 * s, hold: 11 * s, task: 13 * s, want: OutcomeExpired},
		{name: "a renewed session lapses after the deadline", ttl: 10 * s, beat: 5 * s, task: 12 * s, want: OutcomeRevoked},
		{name: "a renewed session lapses before the deadline", ttl: 10 * s, beat: 1 * s, task: 12 * s, want: OutcomeExpired},
	}
	deciders := []struct {
		name   string
		decide func(r *earliestRig) error // a decider that names the lease returns its answer
	}{
		{"reaper at the end", func(r *earliestRig) error {
			r.f.clock.Advance(30*s - r.elapsed)
			r.f.e.Reap(r.f.sys())
			return nil
		}},
		{"reaper every second", func(r *earliestRig) error {
			for r.elapsed < 30*s {
				r.f.clock.Advance(s)
				r.elapsed += s
				r.f.e.Reap(r.f.sys())
			}
			return nil
		}},
		{"validate by the daemon", func(r *earliestRig) error {
			r.f.clock.Advance(30*s - r.elapsed)
			_, err := r.f.e.Validate(r.f.sys(), r.lease)
			return err
		}},
		{"release by the holder's scope", func(r *earliestRig) error {
			r.f.clock.Advance(30*s - r.elapsed)
			_, err := r.f.e.Release(&Call{Session: r.other}, r.lease, Report{})
			return err
		}},
		{"consume on the task", func(r *earliestRig) error {
			r.f.clock.Advance(30*s - r.elapsed)
			_ = r.f.e.Consume(&Call{Session: r.other}, r.task, "http", 1)
			return nil
		}},
		{"describe the parent's children", func(r *earliestRig) error {
			r.f.clock.Advance(30*s - r.elapsed)
			_, _, _, _ = r.f.e.Describe(&Call{Session: r.other}, r.parent, &Page{})
			return nil
		}},
		{"the holder's heartbeat", func(r *earliestRig) error {
			r.f.clock.Advance(30*s - r.elapsed)
			_, _ = r.f.e.Heartbeat(&Call{Session: r.holder})
			return nil
		}},
	}
	for _, tc := range cases {
		for _, d := range deciders {
			t.Run(fmt.Sprintf("%s/%s", tc.name, d.name), func(t *testing.T) {
				t.Parallel()
				r := newEarliestRig(t, tc.ttl, tc.hold, tc.task, tc.parent, tc.sibling)
				if tc.beat != 0 {
					r.f.clock.Advance(tc.beat)
					r.elapsed = tc.beat
					if _, err := r.f.e.Heartbeat(&Call{Session: r.holder}); err != nil {
						t.Fatal(err)
					}
				}
				if err := d.decide(r); err != nil {
					leaseErr(t, err, r.lease, tc.want)
				}
				_, err := r.f.e.Validate(r.f.sys(), r.lease)
				leaseErr(t, err, r.lease, tc.want)
			})
		}
	}
}

// earliestRig is tenant > parent > {task, sibling}, a holder session with one
// lease on task, and a second session on the tenant that lives for an hour.
type earliestRig struct {
	f             *fixture
	parent, task  ID
	holder, other ID
	lease         ID
	elapsed       time.Duration // since the start, before the decider runs
}

func newEarliestRig(t *testing.T, ttl, hold, task, parent, sibling time.Duration) *earliestRig {
	f := newFixture(t)
	r := &earliestRig{f: f}
	deadline := func(d time.Duration) int64 {
		if d == 0 {
			return 0
		}
		return f.at(d)
	}
	if ttl == 0 {
		ttl = time.Hour
	}
	tenant := f.tenant(Spec{Name: "a"})
	r.other = f.session(tenant, time.Hour)
	r.holder = f.session(tenant, ttl)
	r.parent = f.create(r.other, 0, Spec{Name: "parent", Deadline: deadline(parent)})
	r.task = f.create(r.other, r.parent, Spec{Name: "task", Deadline: deadline(task)})
	f.create(r.other, r.parent, Spec{Name: "sibling", Deadline: deadline(sibling)})
	l, w, err := f.e.Acquire(&Call{Session: r.holder}, r.task, "db", hold)
	if err != nil || w != nil {
		t.Fatalf("acquire: %v %v", w, err)
	}
	r.lease = l.ID
	return r
}
