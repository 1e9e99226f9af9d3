package governor

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Describe reads where a task stands: caps, use, limits and held leases,
// its tenant's too, and says why a node it may not see is refused.
func TestDescribeReadsUsageCapsAndHolders(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	deadline := time.Now().Add(time.Hour).Truncate(time.Second)
	ctx, tk := task(t, c, Spec{Name: "seen", Quotas: map[string]int64{"http": 10}, Limits: map[string]int64{"db": 2}, Deadline: deadline})
	if _, err := Consume(ctx, "http", 3); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := NewTask(ctx, Spec{Name: "child"}); err != nil {
		t.Fatal(err)
	}
	n, err := c.Describe(context.Background(), tk.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := ResourceUsage{Cap: 10, Capped: true, Used: 3}
	if n.ID != tk.ID() || n.Name != "seen" || n.Tenant != "team-a" || n.State != "active" || n.Children != 1 || !n.Deadline.Equal(deadline) {
		t.Fatalf("described %+v", n)
	}
	if n.Resources["http"] != want || n.Classes["db"] != (ClassUsage{Limit: 2, Limited: true, Held: 1}) {
		t.Fatalf("usage %+v, classes %+v", n.Resources, n.Classes)
	}
	scope, err := c.Describe(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if scope.Name != "team-a" || scope.ID != n.ParentID || scope.Resources["http"].Used != 3 || scope.Classes["db"].Held != 1 || scope.Classes["db"].Limited {
		t.Fatalf("the scope: %+v", scope)
	}
	if err := l.Release(Report{}); err != nil {
		t.Fatal(err)
	}
	if err := tk.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err = c.Describe(context.Background(), tk.ID()); err != nil || n.State != "done" || n.Classes["db"].Held != 0 || n.EndedReason == "" {
		t.Fatalf("the closed task: %+v, %v", n, err)
	}
	if _, err := c.Describe(context.Background(), 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("describe the root: %v, want ErrNotFound", err)
	}
	if _, err := c.Describe(context.Background(), 1<<40); !errors.Is(err, ErrNotFound) {
		t.Fatalf("describe a node that never existed: %v, want ErrNotFound", err)
	}
}

// Every field of the wire's node reaches Node, the queued acquires too.
func TestNodeReadsEveryWireField(t *testing.T) {
	t.Parallel()
	limit, cap := int64(4), int64(9)
	m := &governorv1.NodeInfo{Id: 7, ParentId: 2, Name: "n", Tenant: "team-a", State: governorv1.NodeState_NODE_STATE_CANCELLED,
		EndedReason: "cancelled: test", Deadline: timestamppb.New(time.Unix(1_800_000_000, 0)), ChildrenCount: 3,
		Resources: map[string]*governorv1.ResourceUsage{"http": {Cap: &cap, Used: 5}, "free": {Used: 1}},
		Classes:   map[string]*governorv1.ClassUsage{"db": {Limit: &limit, Held: 4, Waiting: 6}, "open": {Held: 1}}}
	n := node(m)
	want := Node{ID: 7, ParentID: 2, Name: "n", Tenant: "team-a", State: "cancelled", EndedReason: "cancelled: test",
		Deadline: time.Unix(1_800_000_000, 0).UTC(), Children: 3,
		Resources: map[string]ResourceUsage{"http": {Cap: 9, Capped: true, Used: 5}, "free": {Used: 1}},
		Classes:   map[string]ClassUsage{"db": {Limit: 4, Limited: true, Held: 4, Waiting: 6}, "open": {Held: 1}}}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("got  %+v\nwant %+v", n, want)
	}
}
