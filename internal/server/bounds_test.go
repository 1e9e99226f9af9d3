package server

import (
	"context"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/engine"
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
