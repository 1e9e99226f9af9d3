package engine

import (
	"reflect"
	"testing"
)

// TestSiblingsShareDefaultsSafely: children made under one set of children
// defaults share them in memory, and nothing reaches one of them through
// another: not a caller changing what Describe or a record returned, and not
// new defaults set on one child or on the parent.
func TestSiblingsShareDefaultsSafely(t *testing.T) {
	f := newFixture(t)
	ten := f.tenant(Spec{Name: "a"})
	s := f.session(ten, 0)
	must(t, f.e.SetDefaults(f.sys(), ten, Defaults{Children: &Caps{Quotas: map[string]int64{"http": 3}, Limits: map[string]int64{"db": 1}}}))
	one := f.create(s, 0, Spec{Name: "one"})
	two := f.create(s, 0, Spec{Name: "two"})
	three := f.create(s, 0, Spec{Name: "three"})
	want := Defaults{Caps: Caps{Quotas: map[string]int64{"http": 3}, Limits: map[string]int64{"db": 1}}}

	got := f.describe(one).Defaults
	got.Quotas["http"], got.Limits["db"] = 99, 99
	for _, r := range f.e.Dump().Nodes {
		if r.ID == one {
			r.Defaults.Quotas["http"] = 98
		}
	}
	must(t, f.e.SetDefaults(f.sys(), three, Defaults{Caps: Caps{Quotas: map[string]int64{"http": 4}}}))
	must(t, f.e.SetDefaults(f.sys(), ten, Defaults{Children: &Caps{Quotas: map[string]int64{"http": 5}}}))

	for _, id := range []ID{one, two} {
		if got := f.describe(id).Defaults; !reflect.DeepEqual(got, want) {
			t.Fatalf("node %d has defaults %+v, want %+v", id, got, want)
		}
		leaf := f.create(s, id, Spec{Name: "leaf"})
		if got := caps(f.describe(leaf)); !reflect.DeepEqual(got, want.Caps) {
			t.Fatalf("a child of node %d starts with %+v, want %+v", id, got, want.Caps)
		}
	}
}
