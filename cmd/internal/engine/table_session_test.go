package engine

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// sessionWorld is tenant a with a task whose db limit is 1. Session s1 (TTL
// 10s) holds the slot and waits for another; session s2 (no TTL) waits too.
type sessionWorld struct {
	f        *fixture
	ten, tsk ID
	s1, s2   ID
	lease    LeaseInfo
	w1, w2   *Waiter
}

func newSessionWorld(t *testing.T) *sessionWorld {
	f := newFixture(t)
	w := &sessionWorld{f: f}
	w.ten = f.tenant(Spec{Name: "a"})
	w.s1, w.s2 = f.session(w.ten, 10*time.Second), f.session(w.ten, 0)
	w.tsk = f.create(w.s2, 0, Spec{Name: "task", Limits: map[string]int64{"db": 1}})
	w.lease = f.grant(w.s1, w.tsk, "db")
	w.w1 = f.queue(w.s1, w.tsk, "db")
	w.w2 = f.queue(w.s2, w.tsk, "db")
	return w
}

// TestSessionEnds checks that a session that lapses or closes ends its
// leases (their tombstones say how) and fails its queued acquires, whichever
// call notices first, and that the freed slot goes to the next waiter.
func TestSessionEnds(t *testing.T) {
	cases := []struct {
		name    string
		after   time.Duration
		end     func(w *sessionWorld) error
		want    error   // what end returns
		outcome Outcome // how the lease ended; 0: it is still live
	}{
		{name: "a call naming it a nanosecond early", after: 10*time.Second - 1,
			end: func(w *sessionWorld) error {
				_, _, _, err := w.f.e.Describe(&Call{Session: w.s1}, 0, nil)
				return err
			}},
		{name: "a call naming it", after: 10 * time.Second,
			end: func(w *sessionWorld) error {
				_, _, _, err := w.f.e.Describe(&Call{Session: w.s1}, 0, nil)
				return err
			},
			want: ErrSessionEnded, outcome: OutcomeExpired},
		{name: "a heartbeat that comes too late", after: 10 * time.Second,
			end: func(w *sessionWorld) error {
				_, err := w.f.e.Heartbeat(&Call{Session: w.s1})
				return err
			},
			want: ErrSessionEnded, outcome: OutcomeExpired},
		{name: "reap", after: 10 * time.Second,
			end: func(w *sessionWorld) error {
				if n := w.f.e.Reap(w.f.sys()); n != 2 {
					w.f.t.Fatalf("reap emitted %d events, want 2 (expiry and grant)", n)
				}
				return nil
			},
			outcome: OutcomeExpired},
		{name: "another session validates the lease", after: 10 * time.Second,
			end: func(w *sessionWorld) error {
				_, err := w.f.e.Validate(&Call{Session: w.s2}, w.lease.ID)
				return err
			},
			want: ErrLeaseExpired, outcome: OutcomeExpired},
		{name: "another session releases the lease", after: 10 * time.Second,
			end: func(w *sessionWorld) error {
				_, err := w.f.e.Release(&Call{Session: w.s2}, w.lease.ID, Report{})
				return err
			},
			want: ErrLeaseExpired, outcome: OutcomeExpired},
		{name: "closed", after: time.Second,
			end:     func(w *sessionWorld) error { return w.f.e.CloseSession(&Call{Session: w.s1}) },
			outcome: OutcomeReleased},
	}
	var lapsed *Snapshot // the state after expiry, the same whichever call noticed
	for _, tc := range cases {
		w := newSessionWorld(t)
		w.f.clock.Advance(tc.after)
		if err := tc.end(w); !errors.Is(err, tc.want) || tc.want == nil && err != nil {
			t.Fatalf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if tc.outcome == 0 {
			if _, err := w.f.e.Validate(w.f.sys(), w.lease.ID); err != nil {
				t.Fatalf("%s: lease: %v, want it live", tc.name, err)
			}
			mustWait(t, w.w1)
			mustWait(t, w.w2)
			continue
		}
		st := w.f.e.Dump()
		_, err := w.f.e.Validate(w.f.sys(), w.lease.ID)
		leaseErr(t, err, w.lease.ID, tc.outcome)
		mustFail(t, w.w1, ErrSessionEnded)
		if l := mustGrant(t, w.w2); l.Session != w.s2 {
			t.Fatalf("%s: the slot went to session %d, want %d", tc.name, l.Session, w.s2)
		}
		if _, ok := w.f.e.SessionByToken(token(1)); ok {
			t.Fatalf("%s: the session is still known by its token", tc.name)
		}
		if _, err := w.f.e.Heartbeat(&Call{Session: w.s1}); !errors.Is(err, ErrSessionEnded) {
			t.Fatalf("%s: heartbeat after the end: %v", tc.name, err)
		}
		if tc.outcome != OutcomeExpired {
			continue
		}
		if lapsed != nil && !reflect.DeepEqual(st, lapsed) {
			t.Fatalf("%s: the state after expiry differs:\n%s", tc.name, diffSnapshots(st, lapsed))
		}
		lapsed = st
	}
}

// TestSessionRenewal checks at fixed instants that a heartbeat renews a
// session for one TTL from the moment it arrives, and that Revive gives every
// session one fresh TTL, even one that lapsed unnoticed.
func TestSessionRenewal(t *testing.T) {
	const ttl = 10 * time.Second
	type step struct {
		at      time.Duration // since the session opened
		do      string        // "heartbeat", "revive" or "call"
		alive   bool
		expires time.Duration // since the session opened, when alive
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"heartbeats", []step{
			{at: 9 * time.Second, do: "heartbeat", alive: true, expires: 19 * time.Second},
			{at: 19*time.Second - 1, do: "heartbeat", alive: true, expires: 29*time.Second - 1},
			{at: 29*time.Second - 2, do: "call", alive: true, expires: 29*time.Second - 1},
			{at: 29*time.Second - 1, do: "call"},
		}},
		{"revive", []step{
			{at: 8 * time.Second, do: "revive", alive: true, expires: 18 * time.Second},
			{at: 18*time.Second - 1, do: "call", alive: true, expires: 18 * time.Second},
			{at: 18 * time.Second, do: "call"},
		}},
		{"revive a session that lapsed unnoticed", []step{
			{at: 12 * time.Second, do: "revive", alive: true, expires: 22 * time.Second},
			{at: 21 * time.Second, do: "heartbeat", alive: true, expires: 31 * time.Second},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ten := f.tenant(Spec{Name: "a"})
			opened := f.clock.Now()
			s := f.session(ten, ttl)
			for _, st := range tc.steps {
				f.clock.Advance(opened.Add(st.at).Sub(f.clock.Now()))
				var err error
				switch st.do {
				case "heartbeat":
					_, err = f.e.Heartbeat(&Call{Session: s})
				case "revive":
					f.e.Revive()
				case "call":
					err = f.e.Consume(&Call{Session: s}, 0, "http", 1)
				}
				inf, ok := f.e.SessionByToken(token(1))
				if !st.alive {
					if !errors.Is(err, ErrSessionEnded) || ok {
						t.Fatalf("at %s: %s: %v, known=%v; want the session ended", st.at, st.do, err, ok)
					}
					continue
				}
				if err != nil || !ok || inf.Expires != opened.Add(st.expires).UnixNano() {
					t.Fatalf("at %s: %s: %v; expires %d, want %d", st.at, st.do, err,
						inf.Expires-opened.UnixNano(), st.expires.Nanoseconds())
				}
			}
		})
	}
}

// TestOneCounter checks that nodes, sessions and leases take their ids from
// one counter, so a lease granted later always has a larger id.
func TestOneCounter(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"}) // the root is 1
	var ids []ID
	s := f.session(ten, 0)
	ids = append(ids, ten, s)
	task := f.create(s, 0, Spec{Name: "task", Limits: map[string]int64{"db": 1}})
	l1 := f.grant(s, task, "db")
	w := f.queue(s, task, "db") // takes no id while it waits
	s2 := f.session(ten, 0)
	ids = append(ids, task, l1.ID, s2)
	f.release(s, l1.ID)
	l2 := mustGrant(t, w)
	ids = append(ids, l2.ID, f.create(s2, task, Spec{Name: "sub"}))
	for i, id := range ids {
		if id != ID(i+2) {
			t.Fatalf("id %d is %d, want %d (ids %v)", i, id, i+2, ids)
		}
	}
	if err := f.e.Cancel(f.sys(), task); err != nil {
		t.Fatal(err)
	}
	if err := f.e.Configure(f.sys(), Settings{TombstoneTTL: time.Second, NodeRetention: time.Second}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	f.e.Reap(f.sys())
	if l3 := f.grant(s2, ten, "db"); l3.ID != ids[len(ids)-1]+1 {
		t.Fatalf("after removals the next lease is %d, want %d: ids are never reissued", l3.ID, ids[len(ids)-1]+1)
	}
}
