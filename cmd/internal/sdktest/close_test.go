package sdktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"governor.dev/governor"
)

// TestCloseLeavesNoGoroutine runs here, beside an in-process governord,
// because goleak is no dependency of the SDK's module.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	g := newGovernord(t)
	before := goleak.IgnoreCurrent()
	c, err := governor.Dial(context.Background(), governor.WithAddr(g.addr), governor.WithAPIKey(teamKey))
	if err != nil {
		t.Fatal(err)
	}
	ctx, _, err := c.NewTask(context.Background(), governor.Spec{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := governor.Acquire(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	if err := done(t, ctx, time.Second); !errors.Is(err, governor.ErrClosed) {
		t.Fatalf("task context after Close: %v, want governor.ErrClosed", err)
	}
	if _, err := governor.Consume(ctx, "x", 1); !errors.Is(err, governor.ErrClosed) {
		t.Fatalf("consume after Close: %v, want governor.ErrClosed", err)
	}
	goleak.VerifyNone(t, before)
	if leaseValid(t, g.addr, lease.ID) {
		t.Fatal("the lease is held after Close")
	}
}
