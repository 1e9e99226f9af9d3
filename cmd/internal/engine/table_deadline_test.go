package engine

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

// deadlineWorld is tenant t > p (deadline +10s) and q (none);
// p > c1 (+20s), c2 (+5s), c3 (none); c1 > g (none); c2 > h (+8s).
// c1 has a db limit of 1. One session (no TTL) holds leases l1 on g, l2 on p,
// l3 on c3, l4 on h and lq on q, and waits for a second lease on g.
type deadlineWorld struct {
	f      *fixture
	sess   ID
	ids    map[string]ID
	leases map[string]LeaseInfo
	w      *Waiter
}

func newDeadlineWorld(t *testing.T) *deadlineWorld {
	f := newFixture(t)
	d := &deadlineWorld{f: f, ids: map[string]ID{}, leases: map[string]LeaseInfo{}}
	d.ids["t"] = f.tenant(Spec{Name: "t"})
	d.sess = f.session(d.ids["t"], 0)
	mk := func(name, parent string, after time.Duration, limits map[string]int64) {
		var dl int64
		if after > 0 {
			dl = f.at(after)
		}
		d.ids[name] = f.create(d.sess, d.ids[parent], Spec{Name: name, Deadline: dl, Limits: limits})
	}
	mk("p", "t", 10*time.Second, nil)
	mk("q", "t", 0, nil)
	mk("c1", "p", 20*time.Second, map[string]int64{"db": 1})
	mk("c2", "p", 5*time.Second, nil)
	mk("c3", "p", 0, nil)
	mk("g", "c1", 0, nil)
	mk("h", "c2", 8*time.Second, nil)
	for _, ln := range [][2]string{{"l1", "g"}, {"l2", "p"}, {"l3", "c3"}, {"l4", "h"}, {"lq", "q"}} {
		d.leases[ln[0]] = f.grant(d.sess, d.ids[ln[1]], "db")
	}
	d.w = f.queue(d.sess, d.ids["g"], "db")
	return d
}

// TestEffectiveDeadline checks that a node's deadline is the earlier of its
// own and its parent's.
func TestEffectiveDeadline(t *testing.T) {
	d := newDeadlineWorld(t)
	for name, after := range map[string]time.Duration{
		"t": 0, "q": 0, "p": 10 * time.Second, "c1": 10 * time.Second, "c2": 5 * time.Second,
		"c3": 10 * time.Second, "g": 10 * time.Second, "h": 5 * time.Second,
	} {
		var want int64
		if after > 0 {
			want = d.f.at(after)
		}
		if got := d.f.describe(d.ids[name]).Deadline; got != want {
			t.Errorf("%s: deadline %d, want %d", name, got, want)
		}
	}
}

// TestDeadlinePassed checks that the first call after a deadline ends the
// node that owns it with its whole subtree as DeadlineExceeded, revokes their
// leases and fails their queued acquires, and that Reap does exactly the same:
// each call gives the same answer and leaves the same state with or without a
// Reap before it.
func TestDeadlinePassed(t *testing.T) {
	wholeP := []string{"p", "c1", "c2", "c3", "g", "h"}
	allLeases := []string{"l1", "l2", "l3", "l4"}
	cases := []struct {
		name    string
		after   time.Duration
		op      func(d *deadlineWorld) error
		want    error  // *LeaseError compared exactly, otherwise errors.Is; nil for none
		lease   string // the lease a *LeaseError names
		ended   []string
		revoked []string
	}{
		{name: "nothing is due a nanosecond early", after: 5*time.Second - 1,
			op: func(d *deadlineWorld) error { return d.consume("h") }},
		{name: "own deadline before the parent's: consume on h", after: 5 * time.Second,
			op:   func(d *deadlineWorld) error { return d.consume("h") },
			want: ErrNodeEnded, ended: []string{"c2", "h"}, revoked: []string{"l4"}},
		{name: "consume on a grandchild", after: 10 * time.Second,
			op:   func(d *deadlineWorld) error { return d.consume("g") },
			want: ErrNodeEnded, ended: wholeP, revoked: allLeases},
		{name: "acquire on a child without a deadline", after: 10 * time.Second,
			op: func(d *deadlineWorld) error {
				_, _, err := d.f.e.Acquire(&Call{Session: d.sess}, d.ids["c3"], "db", 0)
				return err
			},
			want: ErrNodeEnded, ended: wholeP, revoked: allLeases},
		{name: "create under a child with a later deadline", after: 10 * time.Second,
			op: func(d *deadlineWorld) error {
				_, err := d.f.e.Create(&Call{Session: d.sess}, d.ids["c1"], Spec{Name: "late"})
				return err
			},
			want: ErrNodeEnded, ended: wholeP, revoked: allLeases},
		{name: "ensure an existing child", after: 11 * time.Second,
			op: func(d *deadlineWorld) error {
				inf, created, err := d.f.e.Ensure(&Call{Session: d.sess}, d.ids["p"], Spec{Name: "c3"}, nil)
				if err == nil && (created || inf.ID != d.ids["c3"] || inf.State != DeadlineExceeded) {
					d.f.t.Fatalf("ensure: %+v created=%v", inf, created)
				}
				return err
			},
			ended: wholeP, revoked: allLeases},
		{name: "describe a grandchild", after: 10 * time.Second,
			op: func(d *deadlineWorld) error {
				inf, _, _, err := d.f.e.Describe(&Call{Session: d.sess}, d.ids["g"], nil)
				if err == nil && inf.State != DeadlineExceeded {
					d.f.t.Fatalf("describe: state %s", inf.State)
				}
				return err
			},
			ended: wholeP, revoked: allLeases},
		{name: "describe the tenant's children", after: 10 * time.Second,
			op: func(d *deadlineWorld) error {
				_, kids, _, err := d.f.e.Describe(&Call{Session: d.sess}, d.ids["t"], &Page{})
				if err == nil && (len(kids) != 2 || kids[0].State != DeadlineExceeded || kids[1].State != Active) {
					d.f.t.Fatalf("describe children: %+v", kids)
				}
				return err
			},
			ended: wholeP, revoked: allLeases},
		{name: "release a lease on a grandchild", after: 10 * time.Second,
			op: func(d *deadlineWorld) error {
				_, err := d.f.e.Release(&Call{Session: d.sess}, d.leases["l1"].ID, Report{})
				return err
			},
			want: &LeaseError{Outcome: OutcomeRevoked}, lease: "l1", ended: wholeP, revoked: allLeases},
		{name: "validate a lease on the node itself", after: time.Minute,
			op: func(d *deadlineWorld) error {
				_, err := d.f.e.Validate(&Call{Session: d.sess}, d.leases["l2"].ID)
				return err
			},
			want: &LeaseError{Outcome: OutcomeRevoked}, lease: "l2", ended: wholeP, revoked: allLeases},
		{name: "cancel a child", after: 10 * time.Second,
			op:   func(d *deadlineWorld) error { return d.f.e.Cancel(&Call{Session: d.sess}, d.ids["c3"]) },
			want: ErrNodeEnded, ended: wholeP, revoked: allLeases},
		{name: "set a quota on a child", after: 10 * time.Second,
			op: func(d *deadlineWorld) error {
				return d.f.e.SetQuota(&Call{Session: d.sess}, d.ids["c1"], "http", ptr(1))
			},
			want: ErrNodeEnded, ended: wholeP, revoked: allLeases},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lazy, reaped := newDeadlineWorld(t), newDeadlineWorld(t)
			lazy.f.clock.Advance(tc.after)
			reaped.f.clock.Advance(tc.after)
			reaped.f.e.Reap(reaped.f.sys())
			for _, d := range []*deadlineWorld{lazy, reaped} {
				err := tc.op(d)
				var le *LeaseError
				switch {
				case errors.As(tc.want, &le):
					leaseErr(t, err, d.leases[tc.lease].ID, le.Outcome)
				case tc.want == nil && err != nil || !errors.Is(err, tc.want):
					t.Fatalf("got %v, want %v", err, tc.want)
				}
			}
			if a, b := lazy.f.e.Dump(), reaped.f.e.Dump(); !reflect.DeepEqual(a, b) {
				t.Fatalf("state without Reap differs from state with Reap:\n%s", diffSnapshots(a, b))
			}
			lazy.check(t, tc.ended, tc.revoked)
			reaped.check(t, tc.ended, tc.revoked)
		})
	}
}

func (d *deadlineWorld) consume(node string) error {
	return d.f.e.Consume(&Call{Session: d.sess}, d.ids[node], "http", 1)
}

// check verifies that exactly the nodes named in ended are past their
// deadline, ended now, that exactly the leases named in revoked are revoked,
// and that the queued acquire on g failed if and only if g ended.
func (d *deadlineWorld) check(t *testing.T, ended, revoked []string) {
	t.Helper()
	now := d.f.clock.Now().UnixNano()
	for name, id := range d.ids {
		inf := d.f.describe(id)
		switch {
		case slices.Contains(ended, name):
			if inf.State != DeadlineExceeded || inf.Ended != now {
				t.Errorf("%s: %s ended at %d, want deadline_exceeded at %d", name, inf.State, inf.Ended, now)
			}
			for c, li := range inf.Limits {
				if li.Held != 0 || li.Waiting != 0 {
					t.Errorf("%s: %s still holds %d and queues %d", name, c, li.Held, li.Waiting)
				}
			}
		case inf.State != Active:
			t.Errorf("%s: %s, want active", name, inf.State)
		}
	}
	for name, l := range d.leases {
		if slices.Contains(revoked, name) {
			_, err := d.f.e.Validate(d.f.sys(), l.ID)
			leaseErr(t, err, l.ID, OutcomeRevoked)
			continue
		}
		if inf, err := d.f.e.Validate(d.f.sys(), l.ID); err != nil || inf != l {
			t.Errorf("lease %s: %+v %v, want it live", name, inf, err)
		}
	}
	if slices.Contains(ended, "g") {
		mustFail(t, d.w, ErrNodeEnded)
	} else {
		mustWait(t, d.w)
	}
}
