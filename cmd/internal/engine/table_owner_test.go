package engine

import (
	"fmt"
	"testing"
	"time"
)

// TestTasksEndWithTheirOwner: a node created through a session ends as
// Cancelled, saying its owner's session ended, when that session is closed
// or lapses, and its subtree with it; a detached node, a node the daemon
// made and a sibling another session made stay active. Replay and a
// snapshot agree.
func TestTasksEndWithTheirOwner(t *testing.T) {
	for _, end := range []string{"closed", "lapsed"} {
		t.Run(end, func(t *testing.T) {
			f := newFixture(t)
			ten := f.tenant(Spec{Name: "a"})
			owner, other := f.session(ten, 10*time.Second), f.session(ten, 0)
			task := f.create(owner, 0, Spec{Name: "task"})
			child := f.create(other, task, Spec{Name: "child"})
			detached := f.create(owner, 0, Spec{Name: "kept", Detached: true})
			daemons := f.sysCreate(ten, Spec{Name: "daemon's"})
			sibling := f.create(other, 0, Spec{Name: "sibling"})
			if end == "closed" {
				if err := f.e.CloseSession(&Call{Session: owner}); err != nil {
					t.Fatal(err)
				}
			} else {
				f.clock.Advance(10 * time.Second)
				f.e.Reap(f.sys())
			}
			check := func(e *Engine, how string) {
				t.Helper()
				for id, want := range map[ID]State{task: Cancelled, child: Cancelled, detached: Active, daemons: Active, sibling: Active} {
					inf, _, _, err := e.Describe(&Call{}, id, nil)
					if err != nil {
						t.Fatal(err)
					}
					if inf.State != want || inf.OwnerEnded != (id == task) {
						t.Fatalf("%s: node %q is %s (owner's end: %v), want %s", how, inf.Name, inf.State, inf.OwnerEnded, want)
					}
				}
			}
			f.everyWay(t, check)
		})
	}
}

// TestOwnedTaskEndsOnce: a task its owner cancelled itself before the
// session ended is not ended again: the session's end records no event
// for it.
func TestOwnedTaskEndsOnce(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	s := f.session(ten, 0)
	task := f.create(s, 0, Spec{Name: "task"})
	if err := f.e.Cancel(&Call{Session: s}, task); err != nil {
		t.Fatal(err)
	}
	from := len(f.rec.events)
	if err := f.e.CloseSession(&Call{Session: s}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.rec.events) - from; n != 1 {
		t.Fatalf("closing the session recorded %d events, want its close only", n)
	}
	if inf := f.describe(task); inf.OwnerEnded {
		t.Fatal("a task cancelled by its caller says its owner's end ended it")
	}
}

// TestDeadWorkersLeaveNoActiveNodes: 1,000 workers, each with its own
// session and a task without a deadline, die without a word. One TTL later
// every task has ended, and after the retention none is left in the tree.
func TestDeadWorkersLeaveNoActiveNodes(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a", Limits: map[string]int64{"db": 2000}})
	const workers = 1000
	for i := range workers {
		s := f.session(ten, 10*time.Second)
		task := f.create(s, 0, Spec{Name: fmt.Sprint("worker-", i)})
		f.grant(s, task, "db")
	}
	if st := f.e.Stats(); st.Active != workers+2 || st.Leases != workers {
		t.Fatalf("before: %+v", st)
	}
	f.clock.Advance(10 * time.Second)
	f.e.Reap(f.sys())
	if st := f.e.Stats(); st.Active != 2 || st.Sessions != 0 || st.Leases != 0 {
		t.Fatalf("one TTL after the workers died: %+v, want the root and the tenant active only", st)
	}
	f.clock.Advance(10 * time.Minute)
	f.e.Reap(f.sys())
	if st := f.e.Stats(); st.Nodes != 2 {
		t.Fatalf("after the retention: %d nodes in the tree, want 2", st.Nodes)
	}
}
