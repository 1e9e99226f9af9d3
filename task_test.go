package governor

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

func TestConsumeIsDeniedWithTheCapAndItsLargestConsumer(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, parent := task(t, c, Spec{Name: "crawl", Quotas: map[string]int64{"tool_calls": 5}})
	sub, _, err := NewTask(ctx, Spec{Name: "page-1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		b, err := Consume(sub, "tool_calls", 1)
		if err != nil {
			t.Fatalf("consume %d: %v", i+1, err)
		}
		if want := int64(4 - i); !b.Capped || b.Remaining != want {
			t.Fatalf("consume %d left %+v, want %d remaining", i+1, b, want)
		}
	}
	_, err = Consume(sub, "tool_calls", 1)
	var d *DeniedError
	if !errors.As(err, &d) || !errors.Is(err, ErrDenied) {
		t.Fatalf("sixth consume: %v, want a *DeniedError", err)
	}
	if d.NodeID != parent.ID() || d.Used != 5 || d.Limit != 5 || d.Requested != 1 || d.Resource != "tool_calls" {
		t.Fatalf("denial %+v names the wrong cap", d)
	}
	if d.Largest == nil || d.Largest.Name != "page-1" || d.Largest.Used != 5 {
		t.Fatalf("largest consumer %+v, want page-1 with 5", d.Largest)
	}
	if !strings.Contains(err.Error(), "tool_calls") {
		t.Fatalf("message %q does not name the resource", err)
	}
	if b, err := Consume(ctx, "uncapped", 3); err != nil || b.Capped {
		t.Fatalf("consume of an uncapped resource: %+v, %v", b, err)
	}
}

func TestErrorsMatchTheirSentinels(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "t"})
	if _, err := Consume(context.Background(), "x", 1); !errors.Is(err, ErrNoTask) {
		t.Errorf("consume without a task: %v, want ErrNoTask", err)
	}
	if _, err := Consume(ctx, "x", -1); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "amount") {
		t.Errorf("consume of -1: %v, want ErrInvalid naming amount", err)
	}
	if _, _, err := c.NewTask(ctx, Spec{Name: ""}); !errors.Is(err, ErrInvalid) {
		t.Errorf("task without a name: %v, want ErrInvalid", err)
	}
	if _, err := Dial(context.Background(), WithAddr(g.addr), WithAPIKey("no-such-key-0123456789")); !errors.Is(err, ErrBadKey) {
		t.Errorf("dial with an unknown key: %v, want ErrBadKey", err)
	}
	if _, err := Dial(context.Background(), WithAddr("127.0.0.1:1"), WithAPIKey(teamKey)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("dial of a closed port: %v, want ErrUnavailable", err)
	}
	if _, err := Dial(context.Background(), WithAddr("nowhere")); !errors.Is(err, ErrInvalid) {
		t.Errorf("dial of a malformed address: %v, want ErrInvalid", err)
	}
	if _, err := Dial(context.Background(), WithAddr(g.addr), WithAPIKey(teamKey), WithSessionTTL(time.Nanosecond)); !errors.Is(err, ErrInvalid) {
		t.Errorf("dial with a TTL below the server's minimum: %v, want ErrInvalid", err)
	}
	foreign := &Task{c: c, s: c.cur, id: 1, name: "root", ctx: ctx}
	if _, err := Consume(context.WithValue(ctx, taskKey{}, foreign), "x", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("consume on the root, outside the key's scope: %v, want ErrNotFound", err)
	}
	missing := &Task{c: c, s: c.cur, id: 1 << 40, name: "gone", ctx: ctx, cancel: func(error) {}}
	if _, err := Consume(context.WithValue(ctx, taskKey{}, missing), "x", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("consume on a node that never existed: %v, want ErrNotFound", err)
	}
}

func TestTaskContextEndsWithTheTask(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	admin := adminAPI(t, g.addr)

	t.Run("closed", func(t *testing.T) {
		ctx, tk := task(t, c, Spec{Name: "closed"})
		sub, _, err := NewTask(ctx, Spec{Name: "child"})
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Close(); err != nil {
			t.Fatal(err)
		}
		if err := done(t, sub, 5*time.Second); !errors.Is(err, ErrTaskEnded) {
			t.Fatalf("subtask context ended with %v, want ErrTaskEnded", err)
		}
		if _, err := Consume(ctx, "x", 1); !errors.Is(err, ErrTaskEnded) {
			t.Fatalf("consume after close: %v, want ErrTaskEnded", err)
		}
		if err := tk.Close(); err != nil {
			t.Fatalf("second close: %v, want nil", err)
		}
	})
	t.Run("cancelled by an operator", func(t *testing.T) {
		ctx, tk := task(t, c, Spec{Name: "operator"})
		_, err := admin.CancelNode(context.Background(), connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: tk.ID(), Reason: "test"}))
		if err != nil {
			t.Fatal(err)
		}
		if err := done(t, ctx, 5*time.Second); !errors.Is(err, ErrTaskEnded) || !strings.Contains(err.Error(), "cancelled") {
			t.Fatalf("context ended with %v, want ErrTaskEnded saying cancelled", err)
		}
	})
	t.Run("cancelled here with a long reason", func(t *testing.T) {
		ctx, tk := task(t, c, Spec{Name: "long"})
		if err := tk.Cancel(strings.Repeat("é", 1000)); err != nil {
			t.Fatalf("cancel with a 2000-byte reason: %v", err)
		}
		if err := done(t, ctx, time.Second); !errors.Is(err, ErrTaskEnded) {
			t.Fatalf("context ended with %v", err)
		}
		res, err := admin.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: tk.ID()}))
		if err != nil || res.Msg.Node.State != governorv1.NodeState_NODE_STATE_CANCELLED {
			t.Fatalf("the node after Cancel: %v, %v", res, err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, _ := task(t, c, Spec{Name: "deadline", Deadline: time.Now().Add(200 * time.Millisecond)})
		if err := done(t, ctx, 5*time.Second); !errors.Is(err, ErrTaskEnded) {
			t.Fatalf("context ended with %v, want ErrTaskEnded", err)
		}
	})
}

// countingTransport counts the requests by path on their way to an h2c
// transport.
type countingTransport struct {
	base  http.RoundTripper
	mu    sync.Mutex
	paths map[string]int
	block atomic.Bool // block heartbeats until their context ends
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	name := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	c.mu.Lock()
	c.paths[name]++
	c.mu.Unlock()
	if name == "Heartbeat" && c.block.Load() {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return c.base.RoundTrip(req)
}

func (c *countingTransport) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[name]
}

func h2cClient(rt *countingTransport) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	rt.base = &http.Transport{Protocols: &p}
	rt.paths = map[string]int{}
	return &http.Client{Transport: rt}
}

func TestOneWatchStreamFollowsEveryTask(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	rt := &countingTransport{}
	c := dial(t, g.addr, WithHTTPClient(h2cClient(rt)))
	var ctxs []context.Context
	var tasks []*Task
	for _, name := range []string{"a", "b", "c", "d"} {
		ctx, tk := task(t, c, Spec{Name: name})
		sub, st, err := NewTask(ctx, Spec{Name: name + "-sub"})
		if err != nil {
			t.Fatal(err)
		}
		ctxs = append(ctxs, ctx, sub)
		tasks = append(tasks, tk, st)
	}
	admin := adminAPI(t, g.addr)
	for _, tk := range tasks {
		if _, err := admin.CancelNode(context.Background(), connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: tk.ID()})); err != nil && connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatal(err)
		}
	}
	for i, ctx := range ctxs {
		if err := done(t, ctx, 5*time.Second); !errors.Is(err, ErrTaskEnded) {
			t.Fatalf("context %d ended with %v", i, err)
		}
	}
	if n := rt.count("WatchNode"); n != 1 {
		t.Fatalf("%d WatchNode streams for 8 tasks, want 1", n)
	}
	if n := rt.count("GetNode"); n != 0 {
		t.Fatalf("%d GetNode calls: the stream should have reported every end", n)
	}
}
