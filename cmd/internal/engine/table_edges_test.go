package engine

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRootCapRefusesEnsureWithCharge: an ensure whose charge the root's
// quota cannot hold is refused by the root (a cap shared above the tenant's
// scope, so the denial names no node to it), creates nothing and charges
// nothing, however much room the tenant has.
func TestRootCapRefusesEnsureWithCharge(t *testing.T) {
	f := newFixture(t)
	if err := f.e.SetQuota(f.sys(), RootID, "spawn", ptr(2)); err != nil {
		t.Fatal(err)
	}
	ten := f.tenant(Spec{Name: "a", Quotas: map[string]int64{"spawn": 100}})
	s := f.session(ten, 0)
	if _, _, err := f.e.Ensure(&Call{Session: s}, 0, Spec{Name: "first"}, &Charge{Resource: "spawn", Amount: 2}); err != nil {
		t.Fatal(err)
	}
	before := f.e.Dump()
	_, _, err := f.e.Ensure(&Call{Session: s}, 0, Spec{Name: "second"}, &Charge{Resource: "spawn", Amount: 1})
	var denied *DeniedError
	if !errors.As(err, &denied) || !denied.Shared || denied.Resource != "spawn" {
		t.Fatalf("ensure past the root's cap: %v, want a denial by the shared cap above", err)
	}
	sameState(t, f.e, before)
	if got := f.used(RootID, "spawn"); got != 2 {
		t.Fatalf("root used %d of spawn, want 2", got)
	}
}

// TestRejoinedTenantQueuesBehind: weights a 3, b 1; a's only waiter gives
// up, which takes a out of the round, and a queues again. a rejoins behind
// b with a fresh deficit, so the grants go b, a, a, a, b.
func TestRejoinedTenantQueuesBehind(t *testing.T) {
	f := newFixture(t)
	p, fillers, fs := newPool(f, "gpu", 5, []string{"a", "b"}, []int32{3, 1})
	p.enqueue("a", 1)
	p.enqueue("b", 3)
	f.e.Abandon(f.sys(), p.waiters["a"][0])
	p.waiters["a"] = nil
	p.enqueue("a", 4)
	var got strings.Builder
	for _, l := range fillers {
		f.release(fs, l.ID)
		got.WriteString(p.next())
	}
	if got.String() != "baaab" {
		t.Fatalf("grants went to %s, want baaab", got.String())
	}
	p.checkHeld()
}

// TestTaskSessionCannotReachItsSibling: a session scoped to one task of a
// tenant cannot name the task beside it, nor its parent; it can name its
// own task and a child of it. The expectations are written out, not
// derived from the engine's own scope walk.
func TestTaskSessionCannotReachItsSibling(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Quotas: map[string]int64{"http": 100}})
	mine := f.sysCreate(ten, Spec{Name: "mine"})
	sibling := f.sysCreate(ten, Spec{Name: "sibling"})
	child := f.sysCreate(mine, Spec{Name: "child"})
	s := f.session(mine, time.Minute)
	for _, tc := range []struct {
		name string
		node ID
		ok   bool
	}{
		{"its own task", mine, true}, {"node 0", 0, true}, {"a child of its task", child, true},
		{"its sibling", sibling, false}, {"its parent, the tenant", ten, false}, {"the root", RootID, false},
	} {
		_, _, _, derr := f.e.Describe(&Call{Session: s}, tc.node, nil)
		cerr := f.e.Consume(&Call{Session: s}, tc.node, "http", 1)
		for call, err := range map[string]error{"describe": derr, "consume": cerr} {
			if tc.ok && err != nil || !tc.ok && !errors.Is(err, ErrNotFound) {
				t.Errorf("%s of %s: %v, want ok=%v (else not found)", call, tc.name, err, tc.ok)
			}
		}
	}
}
