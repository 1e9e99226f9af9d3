package engine

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// contended queues 14 acquires on two tenants of weights 2 and 1 under a
// root of 2 slots, with a child of the first whose limit of 1 parks its
// waiters and its own child's, and then frees a slot freed times.
func contended(f *fixture, freed int) {
	f.setLimit(RootID, "gpu", ptr(2))
	t1, t2 := f.tenant(Spec{Name: "t1", Weight: 2}), f.tenant(Spec{Name: "t2"})
	sub := f.create(0, t1, Spec{Name: "sub", Priority: 1, Limits: map[string]int64{"gpu": 1}})
	low, subx := f.create(0, t1, Spec{Name: "low"}), f.create(0, sub, Spec{Name: "x"})
	var ss []ID
	for range 4 {
		ss = append(ss, f.session(RootID, time.Hour))
	}
	held := []LeaseInfo{f.grant(ss[0], sub, "gpu"), f.grant(ss[1], t2, "gpu")}
	var ws []*Waiter
	for i, nd := range []ID{sub, low, t2, t1, subx, t2, low, t1, t2, sub, low, t2, subx, t1} {
		ws = append(ws, f.queue(ss[i%4], nd, "gpu"))
	}
	for range freed {
		f.release(held[0].Session, held[0].ID)
		held = held[1:]
		for _, w := range ws {
			if g, ok := poll(w); ok {
				held = append(held, g.Lease)
			}
		}
	}
}

// checkPromises: each node's count of promised slots is the number of
// ready groups that hold its promise.
func checkPromises(e *Engine) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	holders := make(map[*classState]int)
	for _, cq := range e.queues {
		for _, tq := range cq.tenants {
			for _, g := range tq.ready {
				if g.promisedBy != nil {
					holders[g.promisedBy]++
				}
			}
		}
	}
	for _, n := range e.nodes {
		for class, cs := range n.cls {
			if cs.promised != holders[cs] {
				return fmt.Errorf("node %d promised %d slots of %s, and %d groups hold a promise", n.id, cs.promised, class, holders[cs])
			}
		}
	}
	return nil
}

// TestRestoreQueueRebuildsTheQueue restores the image of a contended queue
// on an engine restored from the same moment: the rebuilt queue keeps
// every invariant, promises included, and its own image is the one it was
// built from.
func TestRestoreQueueRebuildsTheQueue(t *testing.T) {
	for freed := 1; freed <= 6; freed++ {
		f := newFixture(t)
		contended(f, freed)
		qi, _ := f.e.Queue()
		e, err := Restore(Options{Clock: f.clock}, f.e.Dump())
		if err != nil {
			t.Fatal(err)
		}
		ws, err := e.RestoreQueue(qi)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(checkState(e), checkPromises(e)); err != nil {
			t.Fatalf("%d freed: %v", freed, err)
		}
		again, ws2 := e.Queue()
		if !reflect.DeepEqual(again, qi) || !reflect.DeepEqual(ws, ws2) {
			t.Fatalf("%d freed: the rebuilt queue's image is\n%+v\nwant\n%+v", freed, again, qi)
		}
	}
}

// TestRestoreQueueRefusesAnImageThatDoesNotFit: an image naming a missing
// session, a group of no waiters or a tenant out of its round is refused.
func TestRestoreQueueRefusesAnImageThatDoesNotFit(t *testing.T) {
	f := newFixture(t)
	contended(f, 2)
	qi, _ := f.e.Queue()
	cases := map[string]func(q *QueueImage){
		"missing session":  func(q *QueueImage) { q.Waiters[0].Session = 999 },
		"arrival repeated": func(q *QueueImage) { q.Waiters[1].Arrival = q.Waiters[0].Arrival },
		"group unplaced":   func(q *QueueImage) { q.Groups = q.Groups[1:] },
		"group repeated":   func(q *QueueImage) { q.Groups = append(q.Groups, q.Groups[0]) },
		"tenant off round": func(q *QueueImage) { q.Tenants[0].Ring = -1 },
		"session places":   func(q *QueueImage) { q.Waiters[0].At = 7 },
	}
	for name, spoil := range cases {
		q := QueueImage{Arrivals: qi.Arrivals, Waiters: append([]QueuedAcquire(nil), qi.Waiters...),
			Groups: append([]QueuedGroup(nil), qi.Groups...), Tenants: append([]QueuedTenant(nil), qi.Tenants...)}
		spoil(&q)
		e, err := Restore(Options{Clock: f.clock}, f.e.Dump())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.RestoreQueue(q); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}

// TestRetriedAcquireFindsItsWaiter: an acquire retried with its request id
// while the first still waits gets the same waiter, not a second place in
// the queue (which would be granted a second lease for one request); with
// other arguments it is refused.
func TestRetriedAcquireFindsItsWaiter(t *testing.T) {
	f := newFixture(t)
	pool := f.tenant(Spec{Name: "p", Limits: map[string]int64{"gpu": 1}})
	s := f.session(RootID, time.Hour)
	held := f.grant(s, pool, "gpu")
	c := &Call{Session: s, Request: "r1"}
	_, w, err := f.e.Acquire(c, pool, "gpu", time.Minute)
	if err != nil || w == nil {
		t.Fatalf("first acquire: %v, waiter %v", err, w)
	}
	_, again, err := f.e.Acquire(&Call{Session: s, Request: "r1"}, pool, "gpu", time.Minute)
	if err != nil || again != w {
		t.Fatalf("the retry got waiter %p (%v), want the first, %p", again, err, w)
	}
	if _, _, err := f.e.Acquire(&Call{Session: s, Request: "r1"}, pool, "tpu", time.Minute); !errors.Is(err, ErrRequestMismatch) {
		t.Fatalf("a retry with another class: got %v, want ErrRequestMismatch", err)
	}
	if n := f.e.Stats().Waiting["gpu"]; n != 1 {
		t.Fatalf("%d acquires wait, want 1", n)
	}
	f.release(s, held.ID)
	g := mustGrant(t, w)
	if _, again, err := f.e.Acquire(&Call{Session: s, Request: "r1"}, pool, "gpu", time.Minute); err != nil || again != nil {
		t.Fatalf("a retry after the grant: waiter %v, %v; want the lease", again, err)
	}
	if got := f.e.Stats().Leases; got != 1 {
		t.Fatalf("%d leases held after the grant and a retry, want 1 (lease %d)", got, g.ID)
	}
}

// TestAbandonTellsAReattachedCaller: when the caller that queued gives up
// and withdraws the waiter, a caller that re-attached to it learns so.
func TestAbandonTellsAReattachedCaller(t *testing.T) {
	f := newFixture(t)
	pool := f.tenant(Spec{Name: "p", Limits: map[string]int64{"gpu": 1}})
	s := f.session(RootID, time.Hour)
	f.grant(s, pool, "gpu")
	_, w, err := f.e.Acquire(&Call{Session: s, Request: "r1"}, pool, "gpu", 0)
	if err != nil || w == nil {
		t.Fatalf("acquire: %v, waiter %v", err, w)
	}
	f.e.Abandon(f.sys(), w)
	mustFail(t, w, ErrWithdrawn)
}

// BenchmarkQueueImage copies a queue of 10,000 waiters over 100 tenants
// (what a replica's snapshot holds the engine lock for) and rebuilds it.
func BenchmarkQueueImage(b *testing.B) {
	f := newFixture(b)
	f.setLimit(RootID, "gpu", ptr(1))
	s := f.session(RootID, time.Hour)
	var tenants []ID
	for i := range 100 {
		tenants = append(tenants, f.tenant(Spec{Name: fmt.Sprint("t", i), Weight: int32(1 + i%3)}))
	}
	f.grant(s, tenants[0], "gpu")
	for i := range 10_000 {
		f.queue(s, tenants[i%100], "gpu")
	}
	st := f.e.Dump()
	b.Run("capture", func(b *testing.B) {
		for b.Loop() {
			f.e.Queue()
		}
	})
	qi, _ := f.e.Queue()
	b.Run("restore", func(b *testing.B) {
		for b.Loop() {
			e, err := Restore(Options{Clock: f.clock}, st)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := e.RestoreQueue(qi); err != nil {
				b.Fatal(err)
			}
		}
	})
}
