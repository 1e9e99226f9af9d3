package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func (f *fixture) explain(sess, id ID, name string, amount int64) Explanation {
	f.t.Helper()
	x, err := f.e.Explain(&Call{Session: sess}, id, name, amount)
	if err != nil {
		f.t.Fatalf("explain %s on %d: %v", name, id, err)
	}
	return x
}

// capsOf names the binding caps as kind@node, from the node up.
func capsOf(x Explanation) string {
	s := ""
	for _, b := range x.Caps {
		s += fmt.Sprintf("%s@%d:%d/%d ", b.Kind, b.Node, b.Used, b.Limit)
	}
	return s
}

// TestExplainListsEveryBindingCap builds chains on which two caps bind at
// once and checks both are listed, not only the first.
func TestExplainListsEveryBindingCap(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "t", Quotas: map[string]int64{"tok": 10}, Limits: map[string]int64{"gpu": 1}})
	s := f.session(ten, 0)
	job := f.create(s, ten, Spec{Name: "job", Quotas: map[string]int64{"tok": 4}, Limits: map[string]int64{"gpu": 1},
		Rates: map[string]Rate{"req": {Limit: 2, Period: time.Minute}}})
	f.e.SetRate(f.sys(), ten, "req", &Rate{Limit: 3, Period: time.Second})
	f.consume(s, job, "tok", 4)
	f.consume(s, ten, "tok", 6)
	f.consume(s, job, "req", 2)
	f.grant(s, job, "gpu")
	cases := []struct {
		name string
		want string
	}{
		{"tok", fmt.Sprintf("quota@%d:4/4 quota@%d:10/10 ", job, ten)},
		{"gpu", fmt.Sprintf("limit@%d:1/1 limit@%d:1/1 ", job, ten)},
		{"req", fmt.Sprintf("rate@%d:2/2 ", job)},
	}
	for _, tc := range cases {
		x := f.explain(s, job, tc.name, 1)
		if got := capsOf(x); got != tc.want {
			t.Errorf("explain %s: binding caps %q, want %q", tc.name, got, tc.want)
		}
	}
	if x := f.explain(s, job, "req", 2); len(x.Caps) != 2 {
		t.Errorf("2 req against a rate of 2/min spent and 3/s with 2 used: caps %q, want both rate caps", capsOf(x))
	}
	x := f.explain(s, job, "tok", 1)
	if x.Estimate.Unknown == "" || x.Estimate.At != 0 {
		t.Errorf("spent quotas: estimate %+v, want unknown (a quota never refills)", x.Estimate)
	}
	x = f.explain(s, job, "req", 1)
	if want := f.at(time.Minute); x.Estimate.At != want || x.Caps[0].Refill != want || x.Estimate.Basis[0].Kind != BasisRateRefill {
		t.Errorf("rate spent: estimate %+v refill %d, want %d on a rate refill", x.Estimate, x.Caps[0].Refill, want)
	}
	if x := f.explain(s, job, "free", 1); len(x.Caps) != 0 || !x.Estimate.Now {
		t.Errorf("nothing capped: %+v, want no caps and runs now", x)
	}
}

// TestExplainEstimateMeetsGrant puts a waiter behind a lease with a max hold
// and checks the estimate is the instant the reaper grants it: not one
// nanosecond before, and at it.
func TestExplainEstimateMeetsGrant(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "t", Limits: map[string]int64{"gpu": 1}})
	a, b := f.session(ten, 0), f.session(ten, 0)
	if _, _, err := f.e.Acquire(&Call{Session: a}, ten, "gpu", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	w := f.queue(b, ten, "gpu")
	x := f.explain(b, ten, "gpu", 0)
	if x.Waiting == nil || x.Waiting.Place != 1 || x.Waiting.Waiters != 1 || x.Waiting.Rotation != 1 {
		t.Fatalf("waiting %+v, want one waiter, first in its tenant and in the rotation", x.Waiting)
	}
	if len(x.Caps) != 1 || len(x.Caps[0].Holders) != 1 || x.Caps[0].Holders[0].Basis != BasisMaxHold {
		t.Fatalf("caps %+v, want the full limit with its one holder bounded by its max hold", x.Caps)
	}
	eta := x.Estimate.At
	if eta != f.at(4*time.Second) || len(x.Estimate.Basis) != 1 || x.Estimate.Basis[0].Kind != BasisMaxHold {
		t.Fatalf("estimate %+v, want the end of the max hold in 4s", x.Estimate)
	}
	f.clock.Set(time.Unix(0, eta-1))
	f.e.Reap(f.sys())
	select {
	case g := <-w.C():
		t.Fatalf("granted %+v before the estimate", g)
	default:
	}
	f.clock.Set(time.Unix(0, eta))
	f.e.Reap(f.sys())
	select {
	case g := <-w.C():
		if g.Err != nil || g.Lease.Granted != eta {
			t.Fatalf("grant %+v, want a lease granted at the estimate %d", g, eta)
		}
	default:
		t.Fatal("no grant at the estimate")
	}
}

// TestExplainSecondWaiterWaitsForSecondHolder checks that the second waiter's
// estimate rests on the second holder to end, and that a holder with no
// bound makes the estimate unknown.
func TestExplainSecondWaiterWaitsForSecondHolder(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "t", Limits: map[string]int64{"gpu": 2}})
	s := f.session(ten, 30*time.Second)
	job := f.create(s, ten, Spec{Name: "job", Deadline: f.at(10 * time.Second)})
	other := f.create(s, ten, Spec{Name: "other"})
	if _, _, err := f.e.Acquire(&Call{Session: s}, job, "gpu", 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.e.Acquire(&Call{Session: s}, other, "gpu", time.Minute); err != nil {
		t.Fatal(err)
	}
	f.queue(s, other, "gpu")
	x := f.explain(s, job, "gpu", 0)
	if x.Estimate.At != f.at(10*time.Second) || x.Estimate.Basis[0].Kind != BasisDeadline {
		t.Errorf("a new acquire on job: estimate %+v, want job's deadline in 10s", x.Estimate)
	}
	f.queue(s, job, "gpu")
	x = f.explain(s, job, "gpu", 0)
	if x.Waiting.Place != 2 || x.Estimate.At != f.at(30*time.Second) || x.Estimate.Basis[0].Kind != BasisSessionExpiry {
		t.Errorf("second waiter: place %d estimate %+v, want place 2 and the session's expiry in 30s", x.Waiting.Place, x.Estimate)
	}
	g := newFixture(t)
	t2 := g.tenant(Spec{Name: "t", Limits: map[string]int64{"gpu": 1}})
	bare := g.session(t2, 0)
	g.grant(bare, t2, "gpu")
	x = g.explain(bare, t2, "gpu", 0)
	if x.Estimate.At != 0 || x.Estimate.Unknown == "" {
		t.Errorf("the one holder unbounded: estimate %+v, want unknown", x.Estimate)
	}
}

// TestExplainHidesOtherTenants fills a shared limit at the root with another
// tenant's lease and checks a tenant's session learns only that a shared cap
// above it is full, while the daemon sees the holder.
func TestExplainHidesOtherTenants(t *testing.T) {
	f := newFixture(t)
	f.setLimit(RootID, "gpu", ptr(1))
	ta, tb := f.tenant(Spec{Name: "a"}), f.tenant(Spec{Name: "b"})
	sa, sb := f.session(ta, 0), f.session(tb, 0)
	jb := f.create(sb, tb, Spec{Name: "secret-job"})
	l := f.grant(sb, jb, "gpu")
	f.queue(sa, ta, "gpu")
	x := f.explain(sa, ta, "gpu", 0)
	want := Binding{Kind: CapLimit, Shared: true}
	if len(x.Caps) != 1 || fmt.Sprint(x.Caps[0]) != fmt.Sprint(want) {
		t.Fatalf("tenant a sees %+v, want only that a shared limit is full", x.Caps)
	}
	if x.Estimate.At != 0 || x.Estimate.Unknown == "" || len(x.Estimate.Basis) != 0 {
		t.Errorf("tenant a's estimate %+v, want unknown with no basis", x.Estimate)
	}
	if s := fmt.Sprintf("%+v", x); containsAny(s, "secret-job", fmt.Sprintf(":%d ", jb), fmt.Sprintf(":%d}", l.ID)) {
		t.Errorf("tenant a's explanation names tenant b's work: %s", s)
	}
	x, err := f.e.Explain(f.sys(), ta, "gpu", 0)
	if err != nil || len(x.Caps) != 1 || len(x.Caps[0].Holders) != 1 || x.Caps[0].Holders[0].NodeName != "secret-job" {
		t.Errorf("the daemon sees %+v (%v), want the holder on secret-job", x.Caps, err)
	}
	if _, err := f.e.Explain(&Call{Session: sa}, tb, "gpu", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("tenant a explaining tenant b: %v, want ErrNotFound", err)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
	}
	return false
}

// TestExplainRotation queues two tenants behind a full shared pool and reads
// their places in the rotation and their weights.
func TestExplainRotation(t *testing.T) {
	f := newFixture(t)
	f.setLimit(RootID, "gpu", ptr(1))
	ta, tb := f.tenant(Spec{Name: "a", Weight: 3}), f.tenant(Spec{Name: "b"})
	sa, sb := f.session(ta, 0), f.session(tb, 0)
	f.grant(sa, ta, "gpu")
	f.queue(sa, ta, "gpu")
	f.queue(sb, tb, "gpu")
	xa, xb := f.explain(sa, ta, "gpu", 0), f.explain(sb, tb, "gpu", 0)
	if xa.Waiting.Rotation != 1 || xa.Waiting.Weight != 3 || xa.Waiting.Tenants != 2 || xa.Waiting.Tenant != ta {
		t.Errorf("tenant a: %+v, want first of 2 in the rotation with weight 3", xa.Waiting)
	}
	if xb.Waiting.Rotation != 2 || xb.Waiting.Weight != 1 {
		t.Errorf("tenant b: %+v, want second in the rotation with weight 1", xb.Waiting)
	}
}

// TestExplainRejectsBadInput checks a bad name or amount is an invalid
// argument and an ended node says so.
func TestExplainRejectsBadInput(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "t"})
	for _, tc := range []struct {
		name   string
		amount int64
	}{{"", 1}, {"gpu", -1}, {"a b", 1}} {
		if _, err := f.e.Explain(f.sys(), ten, tc.name, tc.amount); !errors.Is(err, ErrInvalid) {
			t.Errorf("explain %q amount %d: %v, want ErrInvalid", tc.name, tc.amount, err)
		}
	}
	seq := f.e.Seq()
	if err := f.e.Cancel(f.sys(), ten); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Explain(f.sys(), ten, "gpu", 1); !errors.Is(err, ErrNodeEnded) {
		t.Errorf("explain on an ended node: %v, want ErrNodeEnded", err)
	}
	if _, err := f.e.Explain(f.sys(), 999, "gpu", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("explain on no node: %v, want ErrNotFound", err)
	}
	if f.e.Seq() != seq+1 {
		t.Errorf("explain recorded events: seq %d, want %d", f.e.Seq(), seq+1)
	}
}
