package governor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// NoWait answers at once: a lease when a slot is free, a denial when the
// pool is full, and it leaves no waiter behind; it shares Acquire's
// request ids.
func TestNoWaitAnswersAtOnce(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "try", Limits: map[string]int64{"db": 1}})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()

	held, err := Acquire(WithRequestID(ctx, "first"), "db", NoWait())
	if err != nil {
		t.Fatalf("a try-acquire of a free slot: %v", err)
	}
	if _, err := Acquire(ctx, "db", NoWait()); !errors.Is(err, ErrDenied) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a try-acquire of a full pool: %v, want ErrDenied at once", err)
	}
	again, err := Acquire(WithRequestID(ctx, "first"), "db", NoWait())
	if err != nil || again.ID != held.ID {
		t.Fatalf("a try-acquire repeating the first id: %v, %v; want lease %d again", again, err, held.ID)
	}
	if _, err := Acquire(ctx, "Not A Class", NoWait()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a try-acquire of a malformed class: %v, want ErrInvalid", err)
	}
	if err := held.Release(Report{}); err != nil {
		t.Fatal(err)
	}
	// The refused try left no waiter: the freed slot is not taken.
	waitHeld(t, g.addr, tk.ID(), "db", 0, time.Second)
	l, err := Acquire(ctx, "db", NoWait())
	if err != nil {
		t.Fatalf("a try-acquire after the release: %v", err)
	}
	if err := l.Release(Report{}); err != nil {
		t.Fatal(err)
	}
}
