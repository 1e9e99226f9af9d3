package server

import (
	"context"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/pgtest"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestQueuedAcquireWaitsForItsCommit: a queued Acquire whose grant the
// engine has made stays unanswered while commits are held, and is answered
// with its lease once they go through.
func TestQueuedAcquireWaitsForItsCommit(t *testing.T) {
	dsn := pgtest.DSN(t)
	e := newEnv(t, dsn)
	ctx := context.Background()
	holder, held := fill(t, e)
	waiter, wsess := e.session(keyA)
	granted := make(chan *governorv1.Lease, 1)
	go func() {
		res, err := waiter.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
		if err != nil {
			t.Error(err)
			granted <- nil
			return
		}
		granted <- res.Msg.Lease
	}()
	eventually(t, "the acquire to queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })

	release := holdCommits(t, dsn)
	released := make(chan error, 1)
	go func() {
		released <- call(holder.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: held[0]})))
	}()
	eventually(t, "the engine to grant the waiter", func() bool { return e.store.Engine.Stats().Waiting["db"] == 0 })
	quiet(t, "the queued acquire", granted)
	quiet(t, "the release", released)

	release()
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if l := <-granted; l == nil || l.SessionId != wsess.SessionId {
		t.Fatalf("the acquire answered %+v, want a lease of session %d", l, wsess.SessionId)
	}
}

// TestKeyCallsNeverShareAPrincipal: a call made with the admin key and
// then one made with a tenant key act as two principals: each creates
// under its own scope, and the same request id in each is two requests.
func TestKeyCallsNeverShareAPrincipal(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	ensure := func(key, name string) *governorv1.NodeInfo {
		t.Helper()
		res, err := e.client(key).EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{Name: name, RequestId: "same-id"}))
		if err != nil {
			t.Fatalf("ensure %q: %v", name, err)
		}
		return res.Msg.Node
	}
	byAdmin := ensure(adminKey, "by-admin")
	byTenant := ensure(keyA, "by-tenant")
	if byAdmin.ParentId != uint64(engine.RootID) || byTenant.ParentId != uint64(e.tenants["a"]) {
		t.Fatalf("the admin's node is under %d, the tenant's under %d; want the root %d and tenant a %d",
			byAdmin.ParentId, byTenant.ParentId, engine.RootID, e.tenants["a"])
	}
	scopes := map[engine.ID]bool{}
	for _, s := range e.store.Engine.Dump().Sessions {
		scopes[s.Scope] = true
	}
	if len(scopes) != 2 || !scopes[engine.RootID] || !scopes[e.tenants["a"]] {
		t.Fatalf("principal sessions on scopes %v, want one on the root and one on tenant a", scopes)
	}
}
