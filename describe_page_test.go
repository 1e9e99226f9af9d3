package governor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// DescribePage and Children read a wide node's children a bounded page at
// a time, every child once and in id order; a child created between two
// pages comes at the end, and one ended between two pages is read ended.
func TestChildrenPagesThroughAWideNode(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, parent := task(t, c, Spec{Name: "wide"})
	var ids []uint64
	var kids []*Task
	for i := range 250 {
		_, k, err := NewTask(ctx, Spec{Name: fmt.Sprint("c", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids, kids = append(ids, k.ID()), append(kids, k)
	}
	p, err := c.DescribePage(context.Background(), parent.ID(), Page{Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	if p.Node.ID != parent.ID() || p.Node.Children != 250 || len(p.Children) != 100 || p.Children[99].ID != ids[99] || p.Next != ids[99] {
		t.Fatalf("the first page: node %d with %d children, %d read, next %d; want %d with 250, 100 read, next %d", p.Node.ID, p.Node.Children, len(p.Children), p.Next, parent.ID(), ids[99])
	}
	last, err := c.DescribePage(context.Background(), parent.ID(), Page{After: ids[199], Size: 100})
	if err != nil || len(last.Children) != 50 || last.Next != 0 {
		t.Fatalf("the last page: %d children, next %d, %v; want 50 and 0", len(last.Children), last.Next, err)
	}

	var got []uint64
	var late uint64
	for n, err := range c.Children(context.Background(), parent.ID(), 100) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, n.ID)
		if n.ID == ids[199] && n.State != "cancelled" {
			t.Fatalf("child %d, cancelled between two pages, is read %q", n.ID, n.State)
		}
		if len(got) == 100 { // between the first page and the second
			if err := kids[199].Cancel("test"); err != nil {
				t.Fatal(err)
			}
			_, k, err := NewTask(ctx, Spec{Name: "late"})
			if err != nil {
				t.Fatal(err)
			}
			late = k.ID()
		}
	}
	if want := append(slices.Clone(ids), late); !slices.Equal(got, want) {
		t.Fatalf("children read: %d, from %d to %d; want the 250 and the late one, in id order", len(got), got[0], got[len(got)-1])
	}
}

// A page size out of bounds is ErrInvalid before anything is sent, from
// DescribePage and from Children: a size that would wrap on the wire is not
// read as the default.
func TestDescribePageRefusesABadSize(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	_, parent := task(t, c, Spec{Name: "p"})
	for _, size := range []int{-1, MaxPageSize + 1, 1 << 32} {
		if _, err := c.DescribePage(context.Background(), parent.ID(), Page{Size: size}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("page size %d: %v; want ErrInvalid", size, err)
		}
		yields := 0
		for n, err := range c.Children(context.Background(), parent.ID(), size) {
			if yields++; !errors.Is(err, ErrInvalid) || n.ID != 0 {
				t.Fatalf("children of size %d: node %d, %v; want ErrInvalid alone", size, n.ID, err)
			}
		}
		if yields != 1 {
			t.Fatalf("children of size %d yielded %d times; want the error once", size, yields)
		}
	}
}
