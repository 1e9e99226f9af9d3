package server

import (
	"context"
	"fmt"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestTaskEndsWithItsSession: a node created with a session token ends as
// CANCELLED, "owner's session ended", when the session is closed; one
// created detached stays active, and so does one created with the API key.
func TestTaskEndsWithItsSession(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	worker, _ := e.session(keyA)
	reader, _ := e.session(keyA)
	create := func(spec *governorv1.NodeSpec) uint64 {
		t.Helper()
		res, err := worker.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{Spec: spec}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg.Node.Id
	}
	owned := create(&governorv1.NodeSpec{Name: "owned"})
	detached := create(&governorv1.NodeSpec{Name: "detached", Detached: true})
	ensured, err := e.client(keyA).EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{Name: "by-key"}))
	if err != nil {
		t.Fatal(err)
	}
	byKey := ensured.Msg.Node.Id
	if err := call(worker.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uint64]string{owned: "owner's session ended", detached: "", byKey: ""} {
		res, err := reader.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id}))
		if err != nil {
			t.Fatal(err)
		}
		n := res.Msg.Node
		wantState := governorv1.NodeState_NODE_STATE_ACTIVE
		if want != "" {
			wantState = governorv1.NodeState_NODE_STATE_CANCELLED
		}
		if n.State != wantState || n.EndedReason != want {
			t.Fatalf("node %q: %s %q, want %s %q", n.Name, n.State, n.EndedReason, wantState, want)
		}
	}
}

// TestWatchSaysTheOwnerEnded: a watcher of a task whose owner's session
// closes hears it end with the reason, and its child with the cause.
func TestWatchSaysTheOwnerEnded(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := bounded(t)
	worker, _ := e.session(keyA)
	watcher, _ := e.session(keyA)
	job := create(t, worker, 0, "job")
	create(t, watcher, job, "part")
	tree := watch(t, ctx, watcher, &governorv1.WatchNodeRequest{NodeId: job, Subtree: true})
	expect(t, tree, "job:ACTIVE")
	if err := call(worker.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))); err != nil {
		t.Fatal(err)
	}
	expect(t, tree, "part:CANCELLED")
	if want := fmt.Sprintf(`cancelled: its ancestor "job" (node %d) ended with its owner's session`, job); tree.Msg().EndedReason != want {
		t.Fatalf("the child's reason %q, want %q", tree.Msg().EndedReason, want)
	}
	expect(t, tree, "job:CANCELLED")
	if tree.Msg().EndedReason != msgOwnerEnded {
		t.Fatalf("the task's reason %q, want %q", tree.Msg().EndedReason, msgOwnerEnded)
	}
}
