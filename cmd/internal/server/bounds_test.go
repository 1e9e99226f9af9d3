package server

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestWatchStreamsBound: a tenant at its bound on watch streams is refused
// one more with ResourceExhausted naming the bound, the other tenant is not,
// and a stream that ends frees its place.
func TestWatchStreamsBound(t *testing.T) {
	e := newEnv(t, "")
	b := engine.DefaultBounds()
	b[engine.BoundWatches] = 2
	if err := e.store.Engine.SetBounds(engine.BoundsConfig{Default: engine.DefaultBounds(), PerTenant: map[engine.ID]engine.Bounds{e.tenants["a"]: b}}); err != nil {
		t.Fatal(err)
	}
	a, _ := e.session(keyA)
	other, _ := e.session(keyB)
	ctx := context.Background()
	first, cancel := context.WithCancel(ctx)
	defer cancel()
	expect(t, watch(t, first, a, &governorv1.WatchNodeRequest{}), "a:ACTIVE")
	expect(t, watch(t, ctx, a, &governorv1.WatchNodeRequest{}), "a:ACTIVE")
	refused := func() error {
		s, err := a.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{}))
		if err != nil {
			return err
		}
		defer s.Close()
		if s.Receive() {
			return nil
		}
		return s.Err()
	}
	err := refused()
	if code(err) != "resource_exhausted" || !strings.Contains(err.Error(), "bound on watch_streams: it holds 2, the call would add 1, and the bound is 2") {
		t.Fatalf("a third stream: got %v, want ResourceExhausted naming watch_streams", err)
	}
	for range 3 {
		expect(t, watch(t, ctx, other, &governorv1.WatchNodeRequest{}), "b:ACTIVE")
	}
	cancel()
	eventually(t, "the ended stream's place freed", func() bool {
		for _, tb := range e.store.Engine.Bounds() {
			if tb.Name == "a" {
				return tb.Held[engine.BoundWatches] == 1
			}
		}
		return false
	})
	expect(t, watch(t, ctx, a, &governorv1.WatchNodeRequest{}), "a:ACTIVE")
}

// TestBoundsOverTheAPI: each bound the engine keeps refuses its call over
// the API with ResourceExhausted, and the message names the bound.
func TestBoundsOverTheAPI(t *testing.T) {
	e := newEnv(t, "")
	tight := engine.Bounds{engine.BoundNodes: 1, engine.BoundNames: 3, engine.BoundSessions: 2, engine.BoundWatches: 100, engine.BoundQueued: 1}
	if err := e.store.Engine.SetBounds(engine.BoundsConfig{Default: engine.DefaultBounds(), PerTenant: map[engine.ID]engine.Bounds{e.tenants["a"]: tight}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _ := e.session(keyA)
	refused := func(bound string, err error) {
		t.Helper()
		if code(err) != "resource_exhausted" || !strings.Contains(err.Error(), "bounds."+bound) {
			t.Fatalf("past the %s bound: got %v, want ResourceExhausted naming bounds.%s", bound, err, bound)
		}
	}
	create(t, a, 0, "t1")
	_, err := a.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: &governorv1.NodeSpec{Name: "t2"}}))
	refused("nodes", err)

	consume := func(resource string) error {
		_, err := a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: resource, Amount: 1}))
		return err
	}
	if err := consume("fresh"); err != nil { // "tokens" and "db" are the other two
		t.Fatal(err)
	}
	refused("names", consume("fresher"))

	acquire := func(ctx context.Context) error {
		_, err := a.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
		return err
	}
	for range 2 {
		if err := acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waiting, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- acquire(waiting) }()
	eventually(t, "one acquire queued", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	refused("queued_acquires", acquire(ctx))
	stop()
	<-done

	e.session(keyA)
	_, err = e.client(keyA).OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{}))
	refused("sessions", err)
}
