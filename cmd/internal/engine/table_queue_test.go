package engine

import (
	"strings"
	"testing"
)

// TestFairShare frees the slots of a full pool one at a time and reads which
// tenant each grant went to.
func TestFairShare(t *testing.T) {
	cases := []struct {
		name    string
		tenants []string
		weights []int32
		waiters []int // per tenant, enqueued in tenant order
		slots   int
		want    string // the tenant of each grant, in order
	}{
		{name: "equal weights alternate", tenants: []string{"a", "b"},
			waiters: []int{20, 20}, slots: 10, want: "ababababab"},
		{name: "equal weights, three tenants, round robin", tenants: []string{"a", "b", "c"},
			waiters: []int{5, 5, 5}, slots: 9, want: "abcabcabc"},
		{name: "weights 3:1", tenants: []string{"a", "b"}, weights: []int32{3, 1},
			waiters: []int{40, 40}, slots: 40, want: strings.Repeat("aaab", 10)},
		{name: "weights 1:3", tenants: []string{"a", "b"}, weights: []int32{1, 3},
			waiters: []int{40, 40}, slots: 8, want: "abbbabbb"},
		{name: "10,000 waiters and 2 alternate", tenants: []string{"a", "b"},
			waiters: []int{10000, 2}, slots: 6, want: "ababaa"},
		{name: "2 waiters and 10,000 alternate", tenants: []string{"a", "b"},
			waiters: []int{2, 10000}, slots: 6, want: "ababbb"},
		{name: "5,000 waiters and 3 and 3 share a pool of 9", tenants: []string{"a", "b", "c"},
			waiters: []int{5000, 3, 3}, slots: 9, want: "abcabcabc"},
		{name: "a weight spent on a tenant that runs dry", tenants: []string{"a", "b"}, weights: []int32{3, 1},
			waiters: []int{2, 10}, slots: 6, want: "aabbbb"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			p, fillers, fs := newPool(f, "gpu", int64(tc.slots), tc.tenants, tc.weights)
			for i, name := range tc.tenants {
				p.enqueue(name, tc.waiters[i])
			}
			var got strings.Builder
			for _, l := range fillers {
				f.release(fs, l.ID)
				got.WriteString(p.next())
			}
			if got.String() != tc.want {
				t.Fatalf("grants went to %s, want %s", got.String(), tc.want)
			}
			p.checkHeld()
		})
	}
}

// TestFairShareAtOnce frees all nine slots of a pool in one step (the session
// that held them closes) and checks the nine grants are shared 3/3/3.
func TestFairShareAtOnce(t *testing.T) {
	f := newFixture(t)
	p, _, fs := newPool(f, "gpu", 9, []string{"a", "b", "c"}, nil)
	p.enqueue("a", 5000)
	p.enqueue("b", 3)
	p.enqueue("c", 3)
	if err := f.e.CloseSession(&Call{Session: fs}); err != nil {
		t.Fatal(err)
	}
	for _, name := range p.names {
		for range 3 {
			mustGrant(t, p.waiters[name][p.served[name]])
			p.served[name]++
		}
	}
	mustWait(t, p.waiters["a"][3])
	p.checkHeld()
}

// TestWorkConserving checks that a waiter blocked only by a cap inside its
// own subtree never keeps a slot from a waiter that fits, in its own tenant
// or in another, and gets its turn once its own cap has room.
func TestWorkConserving(t *testing.T) {
	f := newFixture(t)
	f.setLimit(RootID, "db", ptr(3))
	a := f.tenant(Spec{Name: "a"})
	b := f.tenant(Spec{Name: "b", Limits: map[string]int64{"db": 1}})
	filler := f.tenant(Spec{Name: "filler"})
	sa, sb, sf := f.session(a, 0), f.session(b, 0), f.session(filler, 0)
	capped := f.create(sa, 0, Spec{Name: "capped", Limits: map[string]int64{"db": 1}})
	free := f.create(sa, 0, Spec{Name: "free"})
	bTask := f.create(sb, 0, Spec{Name: "task"})

	own := f.grant(sa, capped, "db")  // capped is full
	bHeld := f.grant(sb, bTask, "db") // b is full
	f1 := f.grant(sf, filler, "db")   // the root is full

	wCapped := f.queue(sa, capped, "db") // first in a, blocked by its own task
	wB := f.queue(sb, bTask, "db")       // b's, blocked by its own tenant
	wFree1 := f.queue(sa, free, "db")    // behind wCapped in a's queue
	wFree2 := f.queue(sa, free, "db")

	f.release(sf, f1.ID) // one root slot: only wFree1 fits
	l1 := mustGrant(t, wFree1)
	mustWait(t, wCapped)
	mustWait(t, wB)
	mustWait(t, wFree2)

	f.release(sa, own.ID) // capped has room; b, next in the ring, is still full
	mustGrant(t, wCapped)
	mustWait(t, wB)
	mustWait(t, wFree2)

	// b has room again, but it was passed over: it rejoins the ring at the
	// end of the round, so the slot goes to a, at the cursor.
	f.release(sb, bHeld.ID)
	mustGrant(t, wFree2)
	mustWait(t, wB)

	f.release(sa, l1.ID) // b's turn
	mustGrant(t, wB)

	if inf := f.describe(capped).Limits["db"]; inf.Waiting != 0 || inf.Held != 1 {
		t.Fatalf("capped: %+v, want one held and none waiting", inf)
	}
	if inf := f.describe(free).Limits["db"]; inf.Waiting != 0 || inf.Held != 1 {
		t.Fatalf("free: %+v, want one held and none waiting", inf)
	}
}

// TestPriorityInsideTenant checks that inside a tenant a higher priority is
// served first whatever the arrival order, and that priority does not reach
// across tenants.
func TestPriorityInsideTenant(t *testing.T) {
	f := newFixture(t)
	p, fillers, fs := newPool(f, "gpu", 8, []string{"a", "b"}, nil)
	lo := p.task["a"]
	hi := f.create(p.sess["a"], 0, Spec{Name: "hi", Priority: 5})
	mid := f.create(p.sess["a"], 0, Spec{Name: "mid", Priority: 1})
	wLo := []*Waiter{f.queue(p.sess["a"], lo, "gpu"), f.queue(p.sess["a"], lo, "gpu")}
	wMid := []*Waiter{f.queue(p.sess["a"], mid, "gpu")}
	wHi := []*Waiter{f.queue(p.sess["a"], hi, "gpu"), f.queue(p.sess["a"], hi, "gpu")}
	p.enqueue("b", 4)
	want := []struct {
		w *Waiter
		b bool // b's next waiter instead
	}{
		{w: wHi[0]}, {b: true}, {w: wHi[1]}, {b: true}, {w: wMid[0]}, {b: true}, {w: wLo[0]}, {b: true},
	}
	for i, st := range want {
		f.release(fs, fillers[i].ID)
		if st.b {
			if got := p.next(); got != "b" {
				t.Fatalf("grant %d went to %s, want b", i, got)
			}
			continue
		}
		mustGrant(t, st.w)
	}
	mustWait(t, wLo[1])
}

// TestAbandon checks that a waiter that gives up leaks nothing: before its
// grant it just leaves the queue; at the instant of its grant the lease goes
// back and the slot passes to the next waiter.
func TestAbandon(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	s := f.session(ten, 0)
	task := f.create(s, 0, Spec{Name: "task", Limits: map[string]int64{"db": 1}})
	first := f.grant(s, task, "db")
	w1, w2, w3 := f.queue(s, task, "db"), f.queue(s, task, "db"), f.queue(s, task, "db")

	f.e.Abandon(&Call{Session: s}, w2) // still queued: it only leaves, and says so to whoever re-attached to it
	mustFail(t, w2, ErrWithdrawn)
	if inf := f.describe(task).Limits["db"]; inf.Waiting != 2 || inf.Held != 1 {
		t.Fatalf("after abandoning a queued waiter: %+v", inf)
	}

	seq := f.e.Seq()
	f.release(s, first.ID) // w1 is granted ...
	if f.e.Seq() != seq+2 {
		t.Fatalf("release and grant recorded %d events, want 2", f.e.Seq()-seq)
	}
	g, ok := poll(w1)
	if !ok || g.Err != nil {
		t.Fatalf("w1: %+v %v", g, ok)
	}
	f.e.Abandon(&Call{Session: s}, w1) // ... but its caller has just given up
	l3 := mustGrant(t, w3)
	if l3.ID <= g.Lease.ID {
		t.Fatalf("w3's lease %d is not later than w1's %d", l3.ID, g.Lease.ID)
	}
	_, err := f.e.Validate(f.sys(), g.Lease.ID)
	leaseErr(t, err, g.Lease.ID, OutcomeReleased)
	if inf := f.describe(task).Limits["db"]; inf.Waiting != 0 || inf.Held != 1 {
		t.Fatalf("after abandoning a granted waiter: %+v, want one held (w3's), none waiting", inf)
	}
	seq = f.e.Seq()
	f.e.Abandon(&Call{Session: s}, w1) // twice: nothing more
	f.e.Abandon(&Call{Session: s}, w2)
	if f.e.Seq() != seq || f.held(task, "db") != 1 {
		t.Fatal("abandoning again changed something")
	}
	mustWait(t, w2)
}

// TestForfeit checks that a tenant passed over because none of its waiters
// fitted loses the rest of its round: when its turn comes again it starts a
// fresh round of its weight, no more and no less.
func TestForfeit(t *testing.T) {
	f := newFixture(t)
	p, fillers, fs := newPool(f, "gpu", 7, []string{"a", "b"}, []int32{3, 1})
	p.enqueue("a", 10)
	p.enqueue("b", 10)
	steps := []struct {
		aLimit *int64 // set on tenant a before the release, if not nil
		want   string
	}{
		{want: "a"},                  // a's round starts: two grants left
		{aLimit: ptr(1), want: "b"},  // a is full and passed over: its round is lost, it leaves the ring
		{aLimit: ptr(10), want: "b"}, // a rejoins at the end of the round: b's next round comes first
		{want: "a"},                  // then a fresh round of three, no more and no less
		{want: "a"},
		{want: "a"},
		{want: "b"},
	}
	var got, want string
	for i, st := range steps {
		if st.aLimit != nil {
			f.setLimit(p.tenant["a"], "gpu", st.aLimit)
		}
		f.release(fs, fillers[i].ID)
		got += p.next()
		want += st.want
	}
	if got != want {
		t.Fatalf("grants went to %s, want %s", got, want)
	}
	p.checkHeld()
}
