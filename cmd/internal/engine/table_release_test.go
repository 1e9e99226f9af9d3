package engine

import (
	"errors"
	"testing"
	"time"
)

// leaseRig is one tenant with a task, two sessions in its scope and one lease
// held by the first, granted at a fixed instant.
type leaseRig struct {
	f            *fixture
	tenant, task ID
	owner, other ID
	lease        LeaseInfo
}

func newLeaseRig(t *testing.T, maxHold time.Duration) *leaseRig {
	f := newFixture(t)
	r := &leaseRig{f: f}
	r.tenant = f.tenant(Spec{Name: "a", Limits: map[string]int64{"db": 4}})
	r.owner = f.session(r.tenant, 10*time.Second)
	r.other = f.session(r.tenant, time.Hour)
	r.task = f.create(r.owner, 0, Spec{Name: "task"})
	l, w, err := f.e.Acquire(&Call{Session: r.owner}, r.task, "db", maxHold)
	if err != nil || w != nil {
		t.Fatalf("acquire: %v %v", w, err)
	}
	r.lease = l
	return r
}

// shortTombs makes tombstones last five seconds, within the owner's TTL.
func (r *leaseRig) shortTombs() {
	r.f.t.Helper()
	if err := r.f.e.Configure(r.f.sys(), Settings{TombstoneTTL: 5 * time.Second, NodeRetention: time.Hour}); err != nil {
		r.f.t.Fatal(err)
	}
}

// TestReleaseTable checks what Release and Validate answer in every way a
// lease can be found, and that a refused release changes nothing.
func TestReleaseTable(t *testing.T) {
	type answer struct {
		outcome Outcome // Release's outcome when it returns no error
		err     error   // a *LeaseError is compared exactly, anything else with errors.Is
	}
	cases := []struct {
		name    string
		maxHold time.Duration
		// prepare brings the lease into the case's situation and returns the
		// session that calls and the lease id it names.
		prepare  func(r *leaseRig) (caller, id ID)
		release  answer
		validate answer // Validate's answer in the same situation; nil err: live
		// after is how the lease stands once Release has answered: 0 live,
		// otherwise the outcome its tombstone records.
		after     Outcome
		unchanged bool // the release changes no state at all
		sameSeq   bool // the release records no event (it may forget a tombstone)
	}{
		{
			name:     "live lease released by its owner",
			prepare:  func(r *leaseRig) (ID, ID) { return r.owner, r.lease.ID },
			release:  answer{outcome: OutcomeReleased},
			validate: answer{},
			after:    OutcomeReleased,
		},
		{
			name: "released twice",
			prepare: func(r *leaseRig) (ID, ID) {
				r.f.release(r.owner, r.lease.ID)
				return r.owner, r.lease.ID
			},
			release:   answer{outcome: OutcomeAlreadyReleased},
			validate:  answer{err: &LeaseError{Outcome: OutcomeReleased}},
			after:     OutcomeReleased,
			unchanged: true,
		},
		{
			name:      "released by another session in scope",
			prepare:   func(r *leaseRig) (ID, ID) { return r.other, r.lease.ID },
			release:   answer{err: &LeaseError{Outcome: OutcomeNotOwner}},
			validate:  answer{},
			unchanged: true,
		},
		{
			name: "released by a later session after the holder's session expired",
			prepare: func(r *leaseRig) (ID, ID) {
				r.f.clock.Advance(10 * time.Second)
				return r.other, r.lease.ID
			},
			release:  answer{err: &LeaseError{Outcome: OutcomeExpired}},
			validate: answer{err: &LeaseError{Outcome: OutcomeExpired}},
			after:    OutcomeExpired,
		},
		{
			name: "released by the daemon after the holder's session expired",
			prepare: func(r *leaseRig) (ID, ID) {
				r.f.clock.Advance(10 * time.Second)
				return 0, r.lease.ID
			},
			release:  answer{err: &LeaseError{Outcome: OutcomeExpired}},
			validate: answer{err: &LeaseError{Outcome: OutcomeExpired}},
			after:    OutcomeExpired,
		},
		{
			name: "released by the holder after its session expired",
			prepare: func(r *leaseRig) (ID, ID) {
				r.f.clock.Advance(10 * time.Second)
				return r.owner, r.lease.ID
			},
			release:  answer{err: ErrSessionEnded},
			validate: answer{err: ErrSessionEnded},
			after:    OutcomeExpired,
		},
		{
			name:    "released after its hold ran out",
			maxHold: 3 * time.Second,
			prepare: func(r *leaseRig) (ID, ID) {
				r.f.clock.Advance(3 * time.Second)
				return r.owner, r.lease.ID
			},
			release:  answer{err: &LeaseError{Outcome: OutcomeExpired}},
			validate: answer{err: &LeaseError{Outcome: OutcomeExpired}},
			after:    OutcomeExpired,
		},
		{
			name:    "released just before its hold runs out",
			maxHold: 3 * time.Second,
			prepare: func(r *leaseRig) (ID, ID) {
				r.f.clock.Advance(3*time.Second - 1)
				return r.owner, r.lease.ID
			},
			release:  answer{outcome: OutcomeReleased},
			validate: answer{},
			after:    OutcomeReleased,
		},
		{
			name: "released after its node was cancelled",
			prepare: func(r *leaseRig) (ID, ID) {
				if err := r.f.e.Cancel(&Call{Session: r.owner}, r.task); err != nil {
					r.f.t.Fatal(err)
				}
				return r.owner, r.lease.ID
			},
			release:   answer{err: &LeaseError{Outcome: OutcomeRevoked}},
			validate:  answer{err: &LeaseError{Outcome: OutcomeRevoked}},
			after:     OutcomeRevoked,
			unchanged: true,
		},
		{
			name:      "an id never issued",
			prepare:   func(r *leaseRig) (ID, ID) { return r.owner, 1000 },
			release:   answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			validate:  answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			unchanged: true,
		},
		{
			name:      "the id of a node",
			prepare:   func(r *leaseRig) (ID, ID) { return r.owner, r.task },
			release:   answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			validate:  answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			unchanged: true,
		},
		{
			name: "released again just before its tombstone is forgotten",
			prepare: func(r *leaseRig) (ID, ID) {
				r.shortTombs()
				r.f.release(r.owner, r.lease.ID)
				r.f.clock.Advance(5*time.Second - 1)
				return r.owner, r.lease.ID
			},
			release:   answer{outcome: OutcomeAlreadyReleased},
			validate:  answer{err: &LeaseError{Outcome: OutcomeReleased}},
			after:     OutcomeReleased,
			unchanged: true,
		},
		{
			name: "released again once its tombstone is forgotten",
			prepare: func(r *leaseRig) (ID, ID) {
				r.shortTombs()
				r.f.release(r.owner, r.lease.ID)
				r.f.clock.Advance(5 * time.Second)
				return r.owner, r.lease.ID
			},
			release:  answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			validate: answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			after:    OutcomeUnknown,
			sameSeq:  true,
		},
		{
			name: "a revoked lease once its tombstone is forgotten",
			prepare: func(r *leaseRig) (ID, ID) {
				r.shortTombs()
				if err := r.f.e.Cancel(&Call{Session: r.owner}, r.task); err != nil {
					r.f.t.Fatal(err)
				}
				r.f.clock.Advance(5 * time.Second)
				return r.owner, r.lease.ID
			},
			release:  answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			validate: answer{err: &LeaseError{Outcome: OutcomeUnknown}},
			after:    OutcomeUnknown,
			sameSeq:  true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newLeaseRig(t, tc.maxHold)
			caller, id := tc.prepare(r)
			before, seq := r.f.e.Dump(), r.f.e.Seq()
			out, err := r.f.e.Release(&Call{Session: caller}, id, Report{LatencyNanos: 5})
			check(t, "release", id, out, err, tc.release.outcome, tc.release.err)
			if tc.unchanged {
				sameState(t, r.f.e, before)
			}
			if s := r.f.e.Seq(); (tc.unchanged || tc.sameSeq) && s != seq {
				t.Fatalf("seq moved from %d to %d", seq, s)
			}
			if id == r.lease.ID {
				leaseStands(t, r.f, r.lease, tc.after)
			}

			v := newLeaseRig(t, tc.maxHold)
			caller, id = tc.prepare(v)
			inf, err := v.f.e.Validate(&Call{Session: caller}, id)
			if tc.validate.err == nil {
				if err != nil || inf != v.lease {
					t.Fatalf("validate: %+v %v, want %+v", inf, err, v.lease)
				}
				return
			}
			check(t, "validate", id, 0, err, 0, tc.validate.err)
		})
	}
}

// check compares an outcome and error with what a table row wants.
func check(t *testing.T, op string, id ID, out Outcome, err error, wantOut Outcome, wantErr error) {
	t.Helper()
	var want *LeaseError
	switch {
	case errors.As(wantErr, &want):
		leaseErr(t, err, id, want.Outcome)
	case wantErr != nil:
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: got %v, want %v", op, err, wantErr)
		}
	case err != nil || out != wantOut:
		t.Fatalf("%s: got %s, %v; want %s", op, out, err, wantOut)
	}
}

// leaseStands checks, as the daemon, whether a lease is live (after 0) or how
// its tombstone says it ended.
func leaseStands(t *testing.T, f *fixture, l LeaseInfo, after Outcome) {
	t.Helper()
	inf, err := f.e.Validate(f.sys(), l.ID)
	if after == 0 {
		if err != nil || inf != l {
			t.Fatalf("lease after: %+v %v, want it live", inf, err)
		}
		if h := f.held(l.Node, l.Class); h != 1 {
			t.Fatalf("node holds %d, want 1", h)
		}
		return
	}
	leaseErr(t, err, l.ID, after)
	if h := f.held(l.Node, l.Class); h != 0 {
		t.Fatalf("node holds %d after the lease ended, want 0", h)
	}
}

// TestLeaseErrorSentinels checks that every way a named lease can fail
// matches exactly one sentinel, so a caller can tell with errors.Is how the
// lease ended: a released lease is ErrLeaseReleased, not unknown (its
// tombstone remembers it) and not expired (its holder gave it back).
func TestLeaseErrorSentinels(t *testing.T) {
	for o, want := range leaseSentinels {
		t.Run(o.String(), func(t *testing.T) {
			err := error(&LeaseError{Lease: 7, Outcome: o})
			for _, other := range leaseSentinels {
				if got := errors.Is(err, other); got != (other == want) {
					t.Fatalf("errors.Is(%v, %v) = %v", err, other, got)
				}
			}
		})
	}
}

// TestValidateReleased validates a lease its holder gave back: while the
// tombstone is remembered, by the holder, another session in scope and the
// daemon, the answer is ErrLeaseReleased; once it is forgotten, unknown.
func TestValidateReleased(t *testing.T) {
	cases := []struct {
		name   string
		caller func(r *leaseRig) ID
		after  time.Duration // from the release to the validate
		want   error
	}{
		{"holder at once", func(r *leaseRig) ID { return r.owner }, 0, ErrLeaseReleased},
		{"other session", func(r *leaseRig) ID { return r.other }, time.Second, ErrLeaseReleased},
		{"daemon just before forgetting", func(r *leaseRig) ID { return 0 }, 5*time.Second - 1, ErrLeaseReleased},
		{"holder once forgotten", func(r *leaseRig) ID { return r.owner }, 5 * time.Second, ErrLeaseUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newLeaseRig(t, 0)
			r.shortTombs()
			r.f.release(r.owner, r.lease.ID)
			r.f.clock.Advance(tc.after)
			_, err := r.f.e.Validate(&Call{Session: tc.caller(r)}, r.lease.ID)
			if !errors.Is(err, tc.want) {
				t.Fatalf("validate: %v, want %v", err, tc.want)
			}
		})
	}
}
