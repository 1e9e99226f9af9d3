package engine

import (
	"testing"
	"time"
)

// TestNodeRetention checks how long an ended node stays findable by Ensure
// and in the tree: the node_retention setting (10s here), or its spec's
// retention when longer; and that a snapshot taken while it is kept
// removes it at the same instant.
func TestNodeRetention(t *testing.T) {
	cases := []struct {
		name      string
		retention time.Duration
		kept      time.Duration // how long after it ended it is still there
	}{
		{"the setting", 0, 10 * time.Second},
		{"shorter than the setting", 5 * time.Second, 10 * time.Second},
		{"longer than the setting", time.Hour, time.Hour},
	}
	for _, tc := range cases {
		for _, restored := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{true: ", restored from a snapshot"}[restored], func(t *testing.T) {
				f := newFixture(t)
				set := DefaultSettings()
				set.NodeRetention = 10 * time.Second
				must(t, f.e.Configure(f.sys(), set))
				spec := Spec{Name: "run", Retention: tc.retention}
				inf, created, err := f.e.Ensure(f.sys(), RootID, spec, nil)
				if err != nil || !created {
					t.Fatalf("ensure: %+v %v %v", inf, created, err)
				}
				must(t, f.e.Cancel(f.sys(), inf.ID))
				ended := f.clock.Now()
				f.clock.Advance(2 * time.Second)
				if restored {
					e, err := Restore(Options{Clock: f.clock, Sink: f.rec}, f.e.Dump())
					must(t, err)
					f.e = e
				}
				at := func(d time.Duration) (NodeInfo, bool) {
					f.clock.Advance(ended.Add(d).Sub(f.clock.Now()))
					f.e.Reap(f.sys())
					got, created, err := f.e.Ensure(f.sys(), RootID, spec, nil)
					must(t, err)
					return got, created
				}
				if got, created := at(tc.kept - 1); created || got.ID != inf.ID || got.State != Cancelled {
					t.Fatalf("%s after it ended: %+v (created %v); want the cancelled node", tc.kept-1, got, created)
				}
				if got, created := at(tc.kept); !created || got.ID == inf.ID {
					t.Fatalf("%s after it ended: %+v (created %v); want a new node", tc.kept, got, created)
				}
				if _, _, _, err := f.e.Describe(f.sys(), inf.ID, nil); err != ErrNotFound {
					t.Fatalf("the ended node: %v; want it removed", err)
				}
			})
		}
	}
}

// TestEndedScopeRemovedOnceItsSessionEnds checks that an ended node kept
// for a live session scoped to it is removed once the session ends.
func TestEndedScopeRemovedOnceItsSessionEnds(t *testing.T) {
	f := newFixture(t)
	set := DefaultSettings()
	set.NodeRetention = time.Second
	must(t, f.e.Configure(f.sys(), set))
	tenant := f.tenant(Spec{Name: "a"})
	s := f.session(tenant, time.Hour)
	must(t, f.e.Cancel(f.sys(), tenant))
	f.clock.Advance(5 * time.Second)
	f.e.Reap(f.sys())
	if _, _, _, err := f.e.Describe(f.sys(), tenant, nil); err != nil {
		t.Fatalf("a scope of a live session: %v; want it kept", err)
	}
	must(t, f.e.CloseSession(&Call{Session: s}))
	f.clock.Advance(5 * time.Second)
	f.e.Reap(f.sys())
	if _, _, _, err := f.e.Describe(f.sys(), tenant, nil); err != ErrNotFound {
		t.Fatalf("once its session closed: %v; want it removed", err)
	}
}

// TestRetentionValidation checks the bounds of a spec's retention.
func TestRetentionValidation(t *testing.T) {
	f := newFixture(t)
	for _, r := range []time.Duration{-time.Second, MaxRetention + 1} {
		if _, err := f.e.Create(f.sys(), RootID, Spec{Name: "x", Retention: r}); !isInvalid(err, "retention") {
			t.Errorf("retention %s: got %v, want an error on retention", r, err)
		}
	}
	if _, err := f.e.Create(f.sys(), RootID, Spec{Name: "x", Retention: MaxRetention}); err != nil {
		t.Errorf("retention %s: %v", MaxRetention, err)
	}
}
