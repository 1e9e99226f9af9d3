package engine

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// describe returns node id as the daemon sees it.
func (f *fixture) describe(id ID) NodeInfo {
	f.t.Helper()
	inf, _, _, err := f.e.Describe(f.sys(), id, nil)
	if err != nil {
		f.t.Fatalf("describe %d: %v", id, err)
	}
	return inf
}

// used returns what node id's subtree has used of resource.
func (f *fixture) used(id ID, resource string) int64 {
	f.t.Helper()
	return f.describe(id).Quotas[resource].Used
}

// held returns the live leases of class on node id and beneath it.
func (f *fixture) held(id ID, class string) int64 {
	f.t.Helper()
	return f.describe(id).Limits[class].Held
}

// sysCreate creates a node as the daemon.
func (f *fixture) sysCreate(parent ID, spec Spec) ID {
	f.t.Helper()
	inf, err := f.e.Create(f.sys(), parent, spec)
	if err != nil {
		f.t.Fatalf("create %q under %d: %v", spec.Name, parent, err)
	}
	return inf.ID
}

// consume charges n units of resource to node id for sess and fails the test
// on any error.
func (f *fixture) consume(sess, id ID, resource string, n int64) {
	f.t.Helper()
	if err := f.e.Consume(&Call{Session: sess}, id, resource, n); err != nil {
		f.t.Fatalf("consume %d %s on %d: %v", n, resource, id, err)
	}
}

// grant acquires a lease that must be granted at once.
func (f *fixture) grant(sess, id ID, class string) LeaseInfo {
	f.t.Helper()
	l, w := f.acquire(sess, id, class)
	if w != nil {
		f.t.Fatalf("acquire %s on %d queued, want an immediate grant", class, id)
	}
	return l
}

// queue acquires a lease that must wait.
func (f *fixture) queue(sess, id ID, class string) *Waiter {
	f.t.Helper()
	l, w := f.acquire(sess, id, class)
	if w == nil {
		f.t.Fatalf("acquire %s on %d granted lease %d, want it queued", class, id, l.ID)
	}
	return w
}

// release gives a lease back and fails the test unless it was released.
func (f *fixture) release(sess, lease ID) {
	f.t.Helper()
	out, err := f.e.Release(&Call{Session: sess}, lease, Report{})
	if err != nil || out != OutcomeReleased {
		f.t.Fatalf("release %d: %v %v", lease, out, err)
	}
}

// setLimit sets a limit as the daemon.
func (f *fixture) setLimit(id ID, class string, v *int64) {
	f.t.Helper()
	if err := f.e.SetLimit(f.sys(), id, class, v); err != nil {
		f.t.Fatalf("set limit %s on %d: %v", class, id, err)
	}
}

// at returns the fake clock's time plus d, in unix nanoseconds.
func (f *fixture) at(d time.Duration) int64 { return f.clock.Now().Add(d).UnixNano() }

// poll returns the grant a waiter has received, if any, without blocking.
func poll(w *Waiter) (Grant, bool) {
	select {
	case g := <-w.C():
		return g, true
	default:
		return Grant{}, false
	}
}

// mustGrant returns the lease a waiter must have been granted by now.
func mustGrant(t testing.TB, w *Waiter) LeaseInfo {
	t.Helper()
	g, ok := poll(w)
	if !ok {
		t.Fatal("waiter has no grant, want one")
	}
	if g.Err != nil {
		t.Fatalf("waiter failed with %v, want a grant", g.Err)
	}
	return g.Lease
}

// mustWait checks that a waiter has received nothing yet.
func mustWait(t testing.TB, w *Waiter) {
	t.Helper()
	if g, ok := poll(w); ok {
		t.Fatalf("waiter received %+v, want it still waiting", g)
	}
}

// mustFail checks that a waiter was told err.
func mustFail(t testing.TB, w *Waiter, err error) {
	t.Helper()
	g, ok := poll(w)
	if !ok {
		t.Fatalf("waiter has no outcome, want %v", err)
	}
	if !errors.Is(g.Err, err) {
		t.Fatalf("waiter got %+v, want error %v", g, err)
	}
}

// sameState fails the test if the engine's whole state differs from before.
func sameState(t testing.TB, e *Engine, before *Snapshot) {
	t.Helper()
	if after := e.Dump(); !reflect.DeepEqual(before, after) {
		t.Fatalf("state changed:\n%s", diffSnapshots(after, before))
	}
}

// leaseErr checks that err is exactly the LeaseError of lease id with the
// given outcome.
func leaseErr(t testing.TB, err error, id ID, o Outcome) {
	t.Helper()
	var le *LeaseError
	if !errors.As(err, &le) || *le != (LeaseError{Lease: id, Outcome: o}) {
		t.Fatalf("got error %v, want lease %d %s", err, id, o)
	}
	if !errors.Is(err, leaseSentinels[o]) {
		t.Fatalf("lease %d %s: the error %v does not match %v", id, o, err, leaseSentinels[o])
	}
}

// leaseSentinels is the sentinel each outcome of a lease error matches.
var leaseSentinels = map[Outcome]error{
	OutcomeReleased: ErrLeaseReleased,
	OutcomeExpired:  ErrLeaseExpired,
	OutcomeRevoked:  ErrLeaseRevoked,
	OutcomeNotOwner: ErrLeaseNotOwner,
	OutcomeUnknown:  ErrLeaseUnknown,
}

// pool is a set of tenants whose waiters queue for one class, each tenant's
// waiters on one task in arrival order, so its grants come in that order.
type pool struct {
	f       *fixture
	class   string
	names   []string
	tenant  map[string]ID
	task    map[string]ID
	sess    map[string]ID
	waiters map[string][]*Waiter
	served  map[string]int
}

// newPool sets the root's limit of class to slots, creates one tenant per
// name (with the weight given, 0 meaning 1) and fills every slot with a lease
// held by a tenant of its own, "filler".
func newPool(f *fixture, class string, slots int64, names []string, weights []int32) (*pool, []LeaseInfo, ID) {
	f.t.Helper()
	p := &pool{
		f: f, class: class, names: names,
		tenant: map[string]ID{}, task: map[string]ID{}, sess: map[string]ID{},
		waiters: map[string][]*Waiter{}, served: map[string]int{},
	}
	f.setLimit(RootID, class, ptr(slots))
	filler := f.tenant(Spec{Name: "filler"})
	fs := f.session(filler, 0)
	held := make([]LeaseInfo, slots)
	for i := range held {
		held[i] = f.grant(fs, filler, class)
	}
	for i, name := range names {
		var w int32
		if i < len(weights) {
			w = weights[i]
		}
		p.tenant[name] = f.tenant(Spec{Name: name, Weight: w})
		p.sess[name] = f.session(p.tenant[name], 0)
		p.task[name] = f.create(p.sess[name], 0, Spec{Name: "job"})
	}
	return p, held, fs
}

// enqueue queues n acquires for tenant name.
func (p *pool) enqueue(name string, n int) {
	p.f.t.Helper()
	for range n {
		p.waiters[name] = append(p.waiters[name], p.f.queue(p.sess[name], p.task[name], p.class))
	}
}

// next returns the tenant whose next waiter has just been granted. Exactly one
// must have been.
func (p *pool) next() string {
	p.f.t.Helper()
	got := ""
	for _, name := range p.names {
		ws := p.waiters[name]
		i := p.served[name]
		if i >= len(ws) {
			continue
		}
		if g, ok := poll(ws[i]); ok {
			if g.Err != nil || got != "" {
				p.f.t.Fatalf("grant to %s: %+v (already granted to %q)", name, g, got)
			}
			got = name
			p.served[name]++
		}
	}
	if got == "" {
		p.f.t.Fatal("no waiter was granted")
	}
	return got
}

// checkHeld compares each tenant's held leases with the grants seen.
func (p *pool) checkHeld() {
	p.f.t.Helper()
	for _, name := range p.names {
		if h := p.f.held(p.tenant[name], p.class); h != int64(p.served[name]) {
			p.f.t.Fatalf("tenant %s holds %d, but %d grants were seen", name, h, p.served[name])
		}
	}
}
