package engine

import (
	"errors"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	f := newFixture(t)
	ta := f.tenant(Spec{Name: "a", Quotas: map[string]int64{"http": 10}, Limits: map[string]int64{"db": 1}})
	s := f.session(ta, time.Minute)
	task := f.create(s, 0, Spec{Name: "task", Quotas: map[string]int64{"http": 5}})
	c := &Call{Session: s}
	if err := f.e.Consume(c, task, "http", 5); err != nil {
		t.Fatal(err)
	}
	err := f.e.Consume(c, task, "http", 1)
	var d *DeniedError
	if !errors.As(err, &d) || d.Node != task || d.Used != 5 || d.Limit != 5 {
		t.Fatalf("want denial on task, got %v", err)
	}
	l, w := f.acquire(s, task, "db")
	if w != nil || l.ID == 0 {
		t.Fatalf("want immediate grant, got %v %v", l, w)
	}
	_, w2 := f.acquire(s, task, "db")
	if w2 == nil {
		t.Fatal("want a waiter")
	}
	if out, err := f.e.Release(c, l.ID, Report{}); err != nil || out != OutcomeReleased {
		t.Fatalf("release: %v %v", out, err)
	}
	g := <-w2.C()
	if g.Err != nil || g.Lease.ID <= l.ID {
		t.Fatalf("grant: %+v", g)
	}
	if out, err := f.e.Release(c, l.ID, Report{}); err != nil || out != OutcomeAlreadyReleased {
		t.Fatalf("second release: %v %v", out, err)
	}
	f.clock.Advance(2 * time.Minute)
	if _, err := f.e.Validate(&Call{}, g.Lease.ID); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("validate after ttl: %v", err)
	}
	st := f.e.Dump()
	e2, err := Restore(Options{Clock: f.clock}, &Snapshot{Seq: 0, Next: 2, Settings: DefaultSettings(), Nodes: []NodeRec{{ID: 1, Name: "root"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range f.rec.events {
		if err := e2.Replay(ev); err != nil {
			t.Fatalf("replay %d %s: %v", ev.Seq, ev.Kind, err)
		}
	}
	if got := e2.Dump(); !equalSnapshots(got, st) {
		t.Fatalf("replay differs")
	}
}
