package server

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// racingBackend runs hook once, as soon as an Acquire has queued a waiter
// or a TryAcquire has been decided: where a release would land between the
// two steps of a TryAcquire that queued and then withdrew its waiter.
type racingBackend struct {
	Backend
	hook  func()
	fired atomic.Bool
}

func (b *racingBackend) Acquire(c *engine.Call, id engine.ID, class string, hold time.Duration) (engine.LeaseInfo, *engine.Waiter, error) {
	l, w, err := b.Backend.Acquire(c, id, class, hold)
	if w != nil && b.fired.CompareAndSwap(false, true) {
		b.hook()
	}
	return l, w, err
}

func (b *racingBackend) TryAcquire(c *engine.Call, id engine.ID, class string, hold time.Duration) (engine.LeaseInfo, error) {
	l, err := b.Backend.TryAcquire(c, id, class, hold)
	if b.fired.CompareAndSwap(false, true) {
		b.hook()
	}
	return l, err
}

// TestTryAcquireRacingARelease: a release that lands while a TryAcquire on
// a full pool is being decided neither grants the refused caller a lease
// that is then given back (a grant and a release no client asked for), nor
// keeps the freed slot from another caller who asks for it at once.
func TestTryAcquireRacingARelease(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	holder, _ := e.session(keyA)
	var held []uint64
	for range 2 { // tenant a has 2 db slots
		res, err := holder.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, res.Msg.Lease.Id)
	}
	trier, ts := e.session(keyA)
	other, _ := e.session(keyA)
	var otherErr error
	e.srv.store = &racingBackend{Backend: e.srv.store, hook: func() {
		if _, err := holder.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: held[0]})); err != nil {
			t.Errorf("release: %v", err)
		}
		_, otherErr = other.TryAcquire(ctx, connect.NewRequest(&governorv1.TryAcquireRequest{Class: "db"}))
	}}
	_, err := trier.TryAcquire(ctx, connect.NewRequest(&governorv1.TryAcquireRequest{Class: "db"}))
	if code(err) != "resource_exhausted" {
		t.Fatalf("TryAcquire on a full pool: got %v, want resource_exhausted", err)
	}
	if otherErr != nil {
		t.Fatalf("a TryAcquire right after a release freed a slot was refused: %v", otherErr)
	}
	d := e.store.Engine.Dump()
	for _, l := range d.Leases {
		if l.Session == engine.ID(ts.SessionId) {
			t.Fatalf("the refused TryAcquire's session holds lease %d", l.ID)
		}
	}
	for _, tb := range d.Tombs {
		if tb.Session == engine.ID(ts.SessionId) {
			t.Fatalf("the refused TryAcquire's session was granted lease %d, which ended %v", tb.ID, tb.Outcome)
		}
	}
}

// TestTryAcquireIsNotAQueuedAcquire: with the tenant's queued acquires at
// their bound, a TryAcquire on a full pool is refused for want of a slot,
// not by the bound, and no refusal of the bound is counted.
func TestTryAcquireIsNotAQueuedAcquire(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	tight := engine.DefaultBounds()
	tight[engine.BoundQueued] = 1
	if err := e.store.Engine.SetBounds(engine.BoundsConfig{Default: engine.DefaultBounds(), PerTenant: map[engine.ID]engine.Bounds{e.tenants["a"]: tight}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _ := e.session(keyA)
	for range 2 {
		if _, err := a.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"})); err != nil {
			t.Fatal(err)
		}
	}
	waiting, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := a.Acquire(waiting, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
		done <- err
	}()
	eventually(t, "one acquire queued", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	_, err := a.TryAcquire(ctx, connect.NewRequest(&governorv1.TryAcquireRequest{Class: "db"}))
	if code(err) != "resource_exhausted" || !strings.Contains(err.Error(), "slot is free") {
		t.Fatalf("TryAcquire with queued_acquires at its bound: got %v, want resource_exhausted saying no slot is free", err)
	}
	stop()
	<-done
	for _, u := range e.store.Engine.Bounds() {
		if u.Refused[engine.BoundQueued] != 0 {
			t.Fatalf("TryAcquire counted a refusal of queued_acquires: %+v", u)
		}
	}
}

// TestReplicatedTryAcquire: through a cluster's leader, a TryAcquire takes
// the free slot and the next is refused; every replica then holds the one
// lease and has no acquire waiting.
func TestReplicatedTryAcquire(t *testing.T) {
	ms := newMembers(t)
	pool := steady(t, ms, func(lead *member) (engine.ID, error) {
		ctx := context.Background()
		tok, err := lead.token()
		if err != nil {
			return 0, err
		}
		cl := lead.client(tok)
		res, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{
			Spec: &governorv1.NodeSpec{Name: "pool", Limits: map[string]int64{"db": 1}}, RequestId: "pool"}))
		if err != nil {
			return 0, fmt.Errorf("create the pool: %w", err)
		}
		pool := res.Msg.Node.Id
		if _, err := cl.TryAcquire(ctx, connect.NewRequest(&governorv1.TryAcquireRequest{NodeId: pool, Class: "db", RequestId: "t1"})); err != nil {
			return 0, fmt.Errorf("TryAcquire on a free slot: %w", err)
		}
		_, err = cl.TryAcquire(ctx, connect.NewRequest(&governorv1.TryAcquireRequest{NodeId: pool, Class: "db"}))
		if code(err) != "resource_exhausted" {
			return 0, fmt.Errorf("TryAcquire on a held slot: got %v, want resource_exhausted", err)
		}
		return engine.ID(pool), nil
	})
	for i, m := range ms {
		e := m.node.FSM().Engine()
		eventually(t, "the grant on every replica", func() bool {
			inf, _, _, err := e.Describe(&engine.Call{}, pool, nil)
			return err == nil && inf.Limits["db"].Held == 1
		})
		if got := e.Stats().Waiting["db"]; got != 0 {
			t.Errorf("replica %d has %d acquires waiting after a refused TryAcquire", i, got)
		}
	}
}
