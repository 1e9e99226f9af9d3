package governor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A worker whose heartbeats stop (paused, partitioned) gives up its
// session at 80% of the TTL: every task context is cancelled while
// governord still counts the session live, so nothing runs on a lease
// governord is about to hand to someone else. The client then opens a new
// session by itself.
func TestPausedWorkerIsCancelledBeforeTheServersTTL(t *testing.T) {
	g := newGovernord(t)
	rt := &countingTransport{}
	const ttl = 3 * time.Second
	c := dial(t, g.addr, WithHTTPClient(h2cClient(rt)), WithSessionTTL(ttl))
	first := c.SessionID()
	ctxA, _ := task(t, c, Spec{Name: "a"})
	ctxB, _ := task(t, c, Spec{Name: "b"})
	sub, _, err := NewTask(ctxA, Spec{Name: "a-sub"})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := Acquire(sub, "db")
	if err != nil {
		t.Fatal(err)
	}
	for rt.count("Heartbeat") == 0 { // a heartbeat succeeded: the clock starts from it
		time.Sleep(10 * time.Millisecond)
	}
	rt.block.Store(true)

	for _, ctx := range []context.Context{ctxA, ctxB, sub} {
		if err := done(t, ctx, ttl); !errors.Is(err, ErrSessionLost) {
			t.Fatalf("context ended with %v, want ErrSessionLost", err)
		}
	}
	if !leaseValid(t, g.addr, lease.ID) {
		t.Fatal("governord had ended the session before the client gave it up")
	}
	if _, err := Consume(ctxB, "x", 1); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("consume after the session was given up: %v, want ErrSessionLost", err)
	}
	for start := time.Now(); c.SessionID() == first; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > ttl {
			t.Fatal("the client opened no new session by itself")
		}
	}
}

// governord stops and starts again on the same address within the TTL:
// the session, its task and its lease survive, and the client goes on.
// The TTL of 5 s gives the restart 2.3 s at least (the client gives up
// 4 s after its last heartbeat, and heartbeats every 1.7 s): with a TTL of
// 2 s, a restart on a machine loaded by a whole test run once took longer
// than the 0.9 s that left.
func TestSessionAndLeaseSurviveARestart(t *testing.T) {
	cfg := testConfig(t.TempDir())
	g, err := startGovernord(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, g.addr, WithSessionTTL(5*time.Second))
	ctx, tk := task(t, c, Spec{Name: "survivor", Quotas: map[string]int64{"http": 10}})
	lease, err := Acquire(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Consume(ctx, "http", 1); err != nil {
		t.Fatal(err)
	}
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = Consume(short, "http", 1)
	cancel()
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("consume while governord is down: %v, want ErrUnavailable and ErrOutcomeUnknown", err)
	}
	cfg.Listen = g.addr
	g = newGovernordWith(t, cfg)

	if err := lease.Validate(ctx); err != nil {
		t.Fatalf("the lease after the restart: %v", err)
	}
	if b, err := Consume(ctx, "http", 1); err != nil || b.Remaining != 8 {
		t.Fatalf("consume after the restart: %+v, %v; want 8 remaining", b, err)
	}
	time.Sleep(c.TTL() * 3 / 2) // heartbeats carry the session past its TTL
	if ctx.Err() != nil {
		t.Fatalf("the task context ended: %v", context.Cause(ctx))
	}
	if err := lease.Release(Report{}); err != nil {
		t.Fatalf("release after the restart: %v", err)
	}
	// The watch stream no longer follows a task created before the
	// restart; the client asks about it with each heartbeat instead.
	if err := adminCancel(t, g.addr, tk.ID()); err != nil {
		t.Fatal(err)
	}
	if err := done(t, ctx, c.TTL()); !errors.Is(err, ErrTaskEnded) {
		t.Fatalf("context ended with %v, want ErrTaskEnded", err)
	}
	ctx2, tk2 := task(t, c, Spec{Name: "after"})
	if err := adminCancel(t, g.addr, tk2.ID()); err != nil {
		t.Fatal(err)
	}
	if err := done(t, ctx2, c.TTL()); !errors.Is(err, ErrTaskEnded) {
		t.Fatalf("context of a task created after the restart ended with %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
