package governor

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestGroupFansOutUnderAnAgentsLease(t *testing.T) {
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "fan-out", Limits: map[string]int64{"agents": 3}})
	grp, gctx := NewGroup(ctx, ClassAgents)
	var running, most, ran atomic.Int64
	var gs atomic.Int64
	base := runtime.NumGoroutine()
	for i := range 30 {
		grp.Go(Spec{Name: fmt.Sprintf("page-%d", i)}, func(ctx context.Context) error {
			if FromContext(ctx) == nil || FromContext(ctx).ID() == tk.ID() {
				return errors.New("the function's context does not carry its subtask")
			}
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			gs.Store(max(gs.Load(), int64(runtime.NumGoroutine()-base)))
			ran.Add(1)
			time.Sleep(5 * time.Millisecond)
			_, err := Consume(ctx, "pages", 1)
			return err
		})
	}
	if err := grp.Wait(); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 30 {
		t.Fatalf("%d functions ran, want 30", ran.Load())
	}
	if m := most.Load(); m > 3 {
		t.Fatalf("%d functions at once under an agents limit of 3", m)
	}
	if n := gs.Load(); n > 20 {
		t.Fatalf("%d more goroutines while 30 functions were queued: not bounded", n)
	}
	if gctx.Err() == nil {
		t.Fatal("the group's context is live after Wait")
	}
	if u := used(t, g.addr, tk.ID(), "pages"); u != 30 {
		t.Fatalf("%d pages charged to the parent, want 30", u)
	}
}

func TestGroupFirstErrorCancelsTheRest(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "fail", Limits: map[string]int64{"agents": 2}})
	grp, _ := NewGroup(ctx, ClassAgents)
	boom := errors.New("boom")
	var started atomic.Int64
	for i := range 20 {
		grp.Go(Spec{Name: fmt.Sprintf("job-%d", i)}, func(ctx context.Context) error {
			started.Add(1)
			if i == 0 {
				return boom
			}
			<-ctx.Done()
			return context.Cause(ctx)
		})
	}
	if err := grp.Wait(); !errors.Is(err, boom) {
		t.Fatalf("Wait: %v, want the first error", err)
	}
	if n := started.Load(); n > 3 {
		t.Fatalf("%d functions started after the first failed; the rest should be dropped", n)
	}
}

func TestGroupWithoutATask(t *testing.T) {
	t.Parallel()
	grp, _ := NewGroup(context.Background(), ClassAgents)
	grp.Go(Spec{Name: "x"}, func(context.Context) error { return nil })
	if err := grp.Wait(); !errors.Is(err, ErrNoTask) {
		t.Fatalf("Wait: %v, want ErrNoTask", err)
	}
}

func TestGroupStopsWithItsContext(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "stopped", Limits: map[string]int64{"agents": 1}})
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := errors.New("stopped by the caller")
	grp, _ := NewGroup(ctx, ClassAgents)
	var ran atomic.Int64
	for i := range 5 {
		grp.Go(Spec{Name: fmt.Sprintf("job-%d", i)}, func(ctx context.Context) error {
			ran.Add(1)
			cancel(stop)
			<-ctx.Done()
			return nil
		})
	}
	if err := grp.Wait(); !errors.Is(err, stop) {
		t.Fatalf("Wait: %v, want the context's cause", err)
	}
	if n := ran.Load(); n != 1 {
		t.Fatalf("%d functions ran after the context was cancelled", n)
	}
}
