package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestRestoreRefusesUsageThatDoesNotAddUp damages one count of a snapshot at
// a time: a node's used must be its own, its settled and its children's, none
// negative, and a parent must hold every resource a child uses. Each damaged
// snapshot is refused as corrupt; the undamaged one restores.
func TestRestoreRefusesUsageThatDoesNotAddUp(t *testing.T) {
	e := New(Options{Clock: newFakeClock()})
	c := &Call{}
	tenant, _, err := e.Ensure(c, RootID, Spec{Name: "t", Quotas: map[string]int64{"http": 100}}, nil)
	must(t, err)
	var kids []ID
	for _, name := range []string{"a", "b"} {
		inf, err := e.Create(c, tenant.ID, Spec{Name: name, Quotas: map[string]int64{"http": 10}})
		must(t, err)
		must(t, e.Consume(c, inf.ID, "http", 3))
		kids = append(kids, inf.ID)
	}
	must(t, e.Consume(c, tenant.ID, "http", 2))
	node := func(st *Snapshot, id ID) *NodeRec {
		for i := range st.Nodes {
			if st.Nodes[i].ID == id {
				return &st.Nodes[i]
			}
		}
		t.Fatalf("no node %d in the snapshot", id)
		return nil
	}
	set := func(st *Snapshot, id ID, f func(*ResRec)) {
		r := node(st, id)
		f(r.Res["http"])
	}
	for _, tc := range []struct {
		name   string
		damage func(st *Snapshot)
		want   string
	}{
		{"none", func(*Snapshot) {}, ""},
		{"a child used more", func(st *Snapshot) { set(st, kids[0], func(v *ResRec) { v.Used++; v.Own++ }) }, "has used 8 of http but its parts add to 9"},
		{"a leaf's used is not its own", func(st *Snapshot) { set(st, kids[1], func(v *ResRec) { v.Own-- }) }, "has used 3 of http but its parts add to 2"},
		{"the parent's own is off", func(st *Snapshot) { set(st, tenant.ID, func(v *ResRec) { v.Own++ }) }, "has used 8 of http but its parts add to 9"},
		{"negative settled", func(st *Snapshot) {
			set(st, tenant.ID, func(v *ResRec) { v.Settled, v.Own = -1, v.Own+1 })
		}, "has used 8 of http but its parts add to 2"},
		{"the parent lacks the resource", func(st *Snapshot) { delete(node(st, tenant.ID).Res, "http") }, "lacks the http usage of its child"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := e.Dump()
			tc.damage(st)
			_, err := Restore(Options{Clock: newFakeClock()}, st)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("the undamaged snapshot was refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("restore gave %v, want a corrupt record saying %q", err, tc.want)
			}
		})
	}
}
