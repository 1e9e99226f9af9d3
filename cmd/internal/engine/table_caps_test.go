package engine

import (
	"errors"
	"testing"
)

// TestQuotaLowered checks that a quota set below what is used takes nothing
// back and denies every further consume through the node until it is raised.
func TestQuotaLowered(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	s := f.session(ten, 0)
	task := f.create(s, 0, Spec{Name: "task", Quotas: map[string]int64{"http": 10}})
	sub := f.create(s, task, Spec{Name: "sub"})
	f.consume(s, sub, "http", 6)
	steps := []struct {
		name  string
		quota *int64 // set on task first, if not nil
		drop  bool   // remove the cap instead
		at    ID
		n     int64
		deny  *DeniedError // nil: the consume is charged
		used  int64        // task's usage after the step
	}{
		{name: "lowered below what is used", quota: ptr(4), at: sub, n: 1,
			deny: &DeniedError{Node: task, NodeName: "task", Resource: "http", Used: 6, Limit: 4, Requested: 1,
				Largest: Consumer{Node: sub, Name: "sub", Used: 6}}, used: 6},
		{name: "lowered to zero", quota: ptr(0), at: task, n: 1,
			deny: &DeniedError{Node: task, NodeName: "task", Resource: "http", Used: 6, Limit: 0, Requested: 1,
				Largest: Consumer{Node: sub, Name: "sub", Used: 6}}, used: 6},
		{name: "raised again: room for two", quota: ptr(8), at: sub, n: 2, used: 8},
		{name: "and no more", at: task, n: 1,
			deny: &DeniedError{Node: task, NodeName: "task", Resource: "http", Used: 8, Limit: 8, Requested: 1,
				Largest: Consumer{Node: sub, Name: "sub", Used: 8}}, used: 8},
		{name: "removed", drop: true, at: task, n: 100, used: 108},
	}
	for _, st := range steps {
		if st.quota != nil || st.drop {
			if err := f.e.SetQuota(&Call{Session: s}, task, "http", st.quota); err != nil {
				t.Fatalf("%s: set quota: %v", st.name, err)
			}
		}
		seq := f.e.Seq()
		err := f.e.Consume(&Call{Session: s}, st.at, "http", st.n)
		var d *DeniedError
		switch {
		case st.deny == nil && err != nil:
			t.Fatalf("%s: %v, want it charged", st.name, err)
		case st.deny != nil && (!errors.As(err, &d) || *d != *st.deny):
			t.Fatalf("%s: got %v, want %+v", st.name, err, *st.deny)
		case st.deny != nil && f.e.Seq() != seq:
			t.Fatalf("%s: a denial recorded an event", st.name)
		}
		q := f.describe(task).Quotas["http"]
		if q.Used != st.used || f.used(ten, "http") != st.used || f.used(RootID, "http") != st.used {
			t.Fatalf("%s: task used %d (tenant %d, root %d), want %d", st.name, q.Used,
				f.used(ten, "http"), f.used(RootID, "http"), st.used)
		}
	}
}

// TestLimitLowered checks that a limit set below what is held revokes
// nothing, that grants stop until enough leases come back and then resume.
func TestLimitLowered(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	s := f.session(ten, 0)
	task := f.create(s, 0, Spec{Name: "task", Limits: map[string]int64{"db": 3}})
	var held []LeaseInfo
	for range 3 {
		held = append(held, f.grant(s, task, "db"))
	}
	if err := f.e.SetLimit(&Call{Session: s}, task, "db", ptr(1)); err != nil {
		t.Fatal(err)
	}
	for _, l := range held {
		if inf, err := f.e.Validate(&Call{Session: s}, l.ID); err != nil || inf != l {
			t.Fatalf("lease %d after lowering: %+v %v, want it live", l.ID, inf, err)
		}
	}
	li := f.describe(task).Limits["db"]
	if li != (LimitInfo{Limited: true, Limit: 1, Held: 3}) {
		t.Fatalf("limit after lowering: %+v", li)
	}
	w1, w2 := f.queue(s, task, "db"), f.queue(s, task, "db")
	steps := []struct {
		release int   // index into held
		held    int64 // after the release and any grant
		w1      bool  // w1 has been granted by now
	}{
		{release: 0, held: 2},
		{release: 1, held: 1},
		{release: 2, held: 1, w1: true},
	}
	for i, st := range steps {
		f.release(s, held[st.release].ID)
		if st.w1 {
			mustGrant(t, w1)
		} else {
			mustWait(t, w1)
		}
		mustWait(t, w2)
		if h := f.held(task, "db"); h != st.held {
			t.Fatalf("step %d: held %d, want %d", i, h, st.held)
		}
	}
}

// TestLimitRaised checks that raising or removing a limit grants the waiters
// that now fit in the same step.
func TestLimitRaised(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	s := f.session(ten, 0)
	task := f.create(s, 0, Spec{Name: "task", Limits: map[string]int64{"db": 1}})
	f.grant(s, task, "db")
	ws := []*Waiter{f.queue(s, task, "db"), f.queue(s, task, "db"), f.queue(s, task, "db")}
	steps := []struct {
		limit   *int64
		granted int // how many of ws are granted by now
	}{
		{limit: ptr(3), granted: 2},
		{limit: ptr(3), granted: 2},
		{limit: nil, granted: 3},
	}
	got := 0
	for i, st := range steps {
		if err := f.e.SetLimit(&Call{Session: s}, task, "db", st.limit); err != nil {
			t.Fatal(err)
		}
		for ; got < st.granted; got++ {
			mustGrant(t, ws[got])
		}
		for _, w := range ws[got:] {
			mustWait(t, w)
		}
		if inf := f.describe(task).Limits["db"]; inf.Held != int64(1+st.granted) || inf.Waiting != 3-st.granted {
			t.Fatalf("step %d: %+v", i, inf)
		}
	}
}
