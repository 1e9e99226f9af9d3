package governor

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

func TestLeaseIsAFencingTokenReleasedOnce(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "leases", Limits: map[string]int64{"db": 1}})
	first, err := Acquire(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Validate(ctx); err != nil {
		t.Fatalf("validate a held lease: %v", err)
	}
	// The limit is 1: a second acquire waits until the first is released.
	got := make(chan *Lease, 1)
	go func() {
		l, err := Acquire(ctx, "db")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	select {
	case <-got:
		t.Fatal("a second lease was granted over a limit of 1")
	case <-time.After(100 * time.Millisecond):
	}
	if err := first.Release(Report{Latency: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(Report{}); err != nil {
		t.Fatalf("second release: %v, want the first result", err)
	}
	second := <-got
	if second.ID <= first.ID {
		t.Fatalf("second lease id %d not above the first's %d", second.ID, first.ID)
	}
	if err := first.Validate(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("validate a released lease: %v, want ErrLeaseLost", err)
	}
	if err := second.Release(Report{}); err != nil {
		t.Fatal(err)
	}
}

func TestLeaseOfAnEndedTaskIsLost(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "revoked"})
	l, err := Acquire(ctx, "db", WithMaxHold(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if l.HoldUntil.IsZero() {
		t.Fatal("a lease with a max hold has no HoldUntil")
	}
	if err := tk.Cancel("test"); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(Report{}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("release of a revoked lease: %v, want ErrLeaseLost", err)
	}
	if _, err := Acquire(ctx, "db"); !errors.Is(err, ErrTaskEnded) {
		t.Fatalf("acquire on an ended task: %v, want ErrTaskEnded", err)
	}
}

func TestDoReportsLatencyAndOverload(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "do"})
	held := int64(-1)
	err := Do(ctx, "db", func(ctx context.Context) error {
		res, err := adminAPI(t, g.addr).GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: tk.ID()}))
		if err != nil {
			return err
		}
		held = res.Msg.Node.Classes["db"].GetHeld()
		return fmt.Errorf("slow down: %w", ErrOverloaded)
	})
	if !errors.Is(err, ErrOverloaded) {
		t.Fatalf("Do returned %v, want fn's error", err)
	}
	if held != 1 {
		t.Fatalf("%d db leases held during fn, want 1", held)
	}
	res, err := adminAPI(t, g.addr).GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: tk.ID()}))
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Msg.Node.Classes["db"].GetHeld(); n != 0 {
		t.Fatalf("%d db leases held after Do, want 0", n)
	}
}
