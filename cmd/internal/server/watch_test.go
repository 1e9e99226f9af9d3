package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// seen is a stream's message in a short form: name and state.
func seen(m *governorv1.WatchNodeResponse) string {
	return m.Name + ":" + strings.TrimPrefix(m.State.String(), "NODE_STATE_")
}

// expect receives len(want) messages and compares their short forms.
func expect(t *testing.T, s *connect.ServerStreamForClient[governorv1.WatchNodeResponse], want ...string) {
	t.Helper()
	for _, w := range want {
		if !s.Receive() {
			t.Fatalf("stream ended before %s: %v", w, s.Err())
		}
		if got := seen(s.Msg()); got != w {
			t.Fatalf("got %s, want %s", got, w)
		}
	}
}

// watch opens a WatchNode stream that closes when t ends.
func watch(t *testing.T, ctx context.Context, cl governorv1connect.GovernorServiceClient, req *governorv1.WatchNodeRequest) *connect.ServerStreamForClient[governorv1.WatchNodeResponse] {
	t.Helper()
	s, err := cl.WatchNode(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func create(t *testing.T, cl governorv1connect.GovernorServiceClient, parent uint64, name string) uint64 {
	t.Helper()
	res, err := cl.CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{ParentId: parent, Spec: &governorv1.NodeSpec{Name: name}}))
	if err != nil {
		t.Fatal(err)
	}
	return res.Msg.Node.Id
}

// TestWatchSubtree: a subtree watch starts with the node's state, sees
// children come and go, and ends after the node ends, its subtree first.
func TestWatchSubtree(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := bounded(t)
	a, _ := e.session(keyA)
	job := create(t, a, 0, "job")
	create(t, a, job, "u")
	tree := watch(t, ctx, a, &governorv1.WatchNodeRequest{NodeId: job, Subtree: true})
	only := watch(t, ctx, a, &governorv1.WatchNodeRequest{NodeId: job})
	expect(t, tree, "job:ACTIVE")
	expect(t, only, "job:ACTIVE")
	v := create(t, a, job, "v")
	create(t, a, v, "w")
	create(t, a, 0, "elsewhere")
	expect(t, tree, "v:ACTIVE", "w:ACTIVE")
	if err := call(a.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: job}))); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for range 3 {
		expectAny(t, tree, got)
	}
	want := fmt.Sprintf(`cancelled: its ancestor "job" (node %d) was cancelled`, job)
	if got["u:CANCELLED"] != want || got["v:CANCELLED"] != want || got["w:CANCELLED"] != want {
		t.Fatalf("subtree ends: %v, each want reason %q", got, want)
	}
	expect(t, tree, "job:CANCELLED")
	if tree.Msg().EndedReason != "cancelled" {
		t.Fatalf("reason %q, want cancelled", tree.Msg().EndedReason)
	}
	expect(t, only, "job:CANCELLED")
	for name, s := range map[string]*connect.ServerStreamForClient[governorv1.WatchNodeResponse]{"subtree": tree, "node": only} {
		if s.Receive() || s.Err() != nil {
			t.Fatalf("%s stream: want a clean end after the node ended, got %v", name, s.Err())
		}
	}
	// Watching a node that has ended gives its final state and ends.
	late := watch(t, ctx, a, &governorv1.WatchNodeRequest{NodeId: v})
	expect(t, late, "v:CANCELLED")
	if late.Receive() || late.Err() != nil {
		t.Fatalf("watch of an ended node: want a clean end, got %v", late.Err())
	}
}

// expectAny receives one message and records its reason by short form.
func expectAny(t *testing.T, s *connect.ServerStreamForClient[governorv1.WatchNodeResponse], got map[string]string) {
	t.Helper()
	if !s.Receive() {
		t.Fatalf("stream ended early: %v", s.Err())
	}
	got[seen(s.Msg())] = s.Msg().EndedReason
}

// TestWatchCreatedBySession: one stream follows every node a session
// created and their descendants, not other sessions' nodes, and ends when
// the session ends.
func TestWatchCreatedBySession(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := bounded(t)
	mine, _ := e.session(keyA)
	other, _ := e.session(keyA)
	before := create(t, mine, 0, "before")
	s, err := mine.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{CreatedBySession: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expect(t, s, "before:ACTIVE")
	task := create(t, mine, 0, "task")
	create(t, other, 0, "not-mine")
	create(t, other, task, "sub")
	create(t, other, before, "sub2")
	expect(t, s, "task:ACTIVE", "sub:ACTIVE", "sub2:ACTIVE")
	if err := call(other.CloseNode(ctx, connect.NewRequest(&governorv1.CloseNodeRequest{NodeId: task}))); err != nil {
		t.Fatal(err)
	}
	expect(t, s, "sub:CANCELLED", "task:DONE")
	if err := call(mine.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))); err != nil {
		t.Fatal(err)
	}
	if s.Receive() || code(s.Err()) != "unauthenticated" {
		t.Fatalf("after the session closed: want unauthenticated, got %v %v", s.Msg(), s.Err())
	}
}

// TestWatchSeesCancel: a worker's stream on its task hears a cancel made by
// another session, and a client that cancels its stream frees its watcher.
func TestWatchSeesCancel(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := bounded(t)
	boss, _ := e.session(keyA)
	worker, _ := e.session(keyA)
	task := create(t, boss, 0, "task")
	wctx, stop := context.WithCancel(ctx)
	s, err := worker.WatchNode(wctx, connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: task}))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, s, "task:ACTIVE")
	if err := call(boss.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: task}))); err != nil {
		t.Fatal(err)
	}
	expect(t, s, "task:CANCELLED")

	other := create(t, boss, 0, "other")
	s2, err := worker.WatchNode(wctx, connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: other}))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, s2, "other:ACTIVE")
	stop()
	eventually(t, "the cancelled stream's watcher to go", func() bool {
		e.srv.hub.mu.Lock()
		defer e.srv.hub.mu.Unlock()
		return len(e.srv.hub.bySession) == 0
	})
}

// bounded is a context that ends with the test or after 20 seconds, so a
// stream that never ends fails the test instead of hanging it.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newTestHub is a hub over an engine with one tenant and one live session.
func newTestHub(t *testing.T) (*hub, *engine.Engine, engine.ID, engine.ID) {
	t.Helper()
	eng := engine.New(engine.Options{Clock: testclock.New(time.Unix(1e9, 0))})
	ten, err := eng.Create(&engine.Call{}, engine.RootID, engine.Spec{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := eng.OpenSession(&engine.Call{}, ten.ID, time.Minute, [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	return newHub(eng.Dump(), slog.New(slog.NewTextHandler(io.Discard, nil))), eng, ten.ID, sess.ID
}

// TestWatchLagging: a watcher that falls too far behind is closed with
// Unavailable, and Publish never blocks on it.
func TestWatchLagging(t *testing.T) {
	h, eng, ten, sess := newTestHub(t)
	w := &watcher{session: sess, node: ten, subtree: true}
	if _, err := h.watch(context.Background(), nil, eng.Seq(), w); err != nil {
		t.Fatal(err)
	}
	published := make(chan struct{})
	go func() {
		defer close(published)
		seq := eng.Seq()
		for i := range watchBuffer + 1 {
			seq++
			h.publish([]*engine.Event{{Seq: seq, Kind: engine.KindNodeCreated, Target: engine.ID(1000 + i), Node: ten, Spec: &engine.Spec{Name: fmt.Sprint(i)}}}, eng)
		}
	}()
	select {
	case <-published:
	case <-time.After(10 * time.Second):
		t.Fatal("publish blocked on a watcher that does not read")
	}
	<-w.gone
	if code(w.err) != "unavailable" || !strings.Contains(w.err.Error(), "watch again") {
		t.Fatalf("lagging watcher: want unavailable, got %v", w.err)
	}
	if len(w.ch) != watchBuffer {
		t.Fatalf("buffer holds %d notes, want %d", len(w.ch), watchBuffer)
	}
}

// TestWatchGap: events that were never published make the hub reload and
// close every watcher, which missed changes.
func TestWatchGap(t *testing.T) {
	h, eng, ten, sess := newTestHub(t)
	w := &watcher{session: sess, node: ten}
	if _, err := h.watch(context.Background(), nil, eng.Seq(), w); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Create(&engine.Call{}, ten, engine.Spec{Name: "missed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Create(&engine.Call{}, ten, engine.Spec{Name: "seen"}); err != nil {
		t.Fatal(err)
	}
	h.publish([]*engine.Event{{Seq: eng.Seq(), Kind: engine.KindNodeCreated, Target: 99, Node: ten, Spec: &engine.Spec{Name: "seen"}}}, eng)
	<-w.gone
	if code(w.err) != "unavailable" {
		t.Fatalf("want unavailable, got %v", w.err)
	}
	if h.seq != eng.Seq() || len(h.nodes) != 4 {
		t.Fatalf("hub at %d with %d nodes, want %d with 4", h.seq, len(h.nodes), eng.Seq())
	}
}
