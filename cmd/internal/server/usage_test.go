package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

type usageStream = connect.ServerStreamForClient[governorv1.WatchNodeResponse]

// use is a usage message in a short form: name, tokens used, db held.
func use(m *governorv1.WatchNodeResponse) string {
	u := m.Usage
	return fmt.Sprintf("%s tokens=%d db=%d", m.Name, u.GetResources()["tokens"].GetUsed(), u.GetClasses()["db"].GetHeld())
}

// expectUse receives messages until every one of want was seen as a usage
// message, and fails on a usage message of a node not in want.
func expectUse(t *testing.T, s *usageStream, want ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, w := range want {
		left[w] = true
	}
	for len(left) > 0 {
		if !s.Receive() {
			t.Fatalf("stream ended while waiting for %v: %v", left, s.Err())
		}
		m := s.Msg()
		if m.Usage == nil {
			continue
		}
		if !left[use(m)] {
			t.Fatalf("usage %q, want one of %v", use(m), left)
		}
		delete(left, use(m))
	}
}

// TestWatchUsage: a subtree watch with usage hears every change of use of
// the tenant and its nodes (consumes, grants, releases, expiries, a session
// that ends with its leases, cap edits) and nothing of another tenant.
func TestWatchUsage(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := bounded(t)
	a, _ := e.session(keyA)
	b, _ := e.session(keyB)
	job := create(t, a, 0, "job")
	s, err := a.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{Subtree: true, Usage: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expect(t, s, "a:ACTIVE")
	consume := func(cl interface {
		Consume(context.Context, *connect.Request[governorv1.ConsumeRequest]) (*connect.Response[governorv1.ConsumeResponse], error)
	}, node uint64, n int64) {
		t.Helper()
		if err := call(cl.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: node, Resource: "tokens", Amount: n}))); err != nil {
			t.Fatal(err)
		}
	}
	consume(b, 0, 5) // another tenant: never heard of
	consume(a, job, 3)
	expectUse(t, s, "a tokens=3 db=0", "job tokens=3 db=0")

	_, err = a.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: job, Class: "db", MaxHold: durationpb.New(time.Second)}))
	if err != nil {
		t.Fatal(err)
	}
	expectUse(t, s, "a tokens=3 db=1", "job tokens=3 db=1")
	e.clock.Advance(2 * time.Second)
	c := &engine.Call{}
	e.store.Engine.Reap(c)
	if err := e.store.Wait(ctx, c.Seq); err != nil {
		t.Fatal(err)
	}
	expectUse(t, s, "a tokens=3 db=0", "job tokens=3 db=0")

	other, _ := e.session(keyA)
	if err := call(other.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{NodeId: job, Class: "db"}))); err != nil {
		t.Fatal(err)
	}
	expectUse(t, s, "a tokens=3 db=1", "job tokens=3 db=1")
	if err := call(other.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))); err != nil {
		t.Fatal(err)
	}
	expectUse(t, s, "a tokens=3 db=0", "job tokens=3 db=0")

	if err := call(a.SetQuota(ctx, connect.NewRequest(&governorv1.SetQuotaRequest{NodeId: job, Resource: "tokens", Value: ptr(int64(7))}))); err != nil {
		t.Fatal(err)
	}
	for s.Receive() && s.Msg().Name != "job" {
	}
	if s.Msg().Usage == nil || s.Msg().Usage.Resources["tokens"].GetCap() != 7 {
		t.Fatalf("after a quota edit: %v (%v), want job's usage with a cap of 7", s.Msg(), s.Err())
	}
}

// TestWatchWithoutUsageHearsNoUse: a watch that did not ask for use gets
// only changes of state.
func TestWatchWithoutUsageHearsNoUse(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := bounded(t)
	a, _ := e.session(keyA)
	s, err := a.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{Subtree: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expect(t, s, "a:ACTIVE")
	if err := call(a.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: 1}))); err != nil {
		t.Fatal(err)
	}
	create(t, a, 0, "next")
	if !s.Receive() || s.Msg().Usage != nil || seen(s.Msg()) != "next:ACTIVE" {
		t.Fatalf("got %v (%v), want only next's creation", s.Msg(), s.Err())
	}
	mine, err := a.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{CreatedBySession: true, Usage: true}))
	if err == nil {
		mine.Receive()
		err = mine.Err()
	}
	if code(err) != "invalid_argument" {
		t.Errorf("usage with created_by_session: %v, want invalid_argument", err)
	}
}

// TestWatchUsageAfterARestart: a lease granted before a restart is known
// to the usage watch after it, so its expiry is heard.
func TestWatchUsageAfterARestart(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := bounded(t)
	a, _ := e.session(keyA)
	if err := call(a.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db", MaxHold: durationpb.New(time.Second)}))); err != nil {
		t.Fatal(err)
	}
	e.restart()
	a, _ = e.session(keyA)
	s, err := a.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{Usage: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expect(t, s, "a:ACTIVE")
	e.clock.Advance(2 * time.Second)
	c := &engine.Call{}
	e.store.Engine.Reap(c)
	if err := e.store.Wait(ctx, c.Seq); err != nil {
		t.Fatal(err)
	}
	expectUse(t, s, "a tokens=0 db=0")
}
