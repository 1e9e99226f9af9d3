package server

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// used is what tenant a has consumed of its tokens.
func used(t *testing.T, e *env) int64 {
	t.Helper()
	inf, _, _, err := e.store.Engine.Describe(&engine.Call{}, e.tenants["a"], nil)
	if err != nil {
		t.Fatal(err)
	}
	return inf.Quotas["tokens"].Used
}

// TestKeyConsumeIsChargedOnce: a consume made with the API key directly and
// repeated with its request id is charged once, also after a restart,
// because the key's principal session and its request ids are on record.
func TestKeyConsumeIsChargedOnce(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	consume := func(amount int64) error {
		return call(e.client(keyA).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: amount, RequestId: "hook-1"})))
	}
	for range 3 {
		if err := consume(7); err != nil {
			t.Fatal(err)
		}
	}
	if got := used(t, e); got != 7 {
		t.Fatalf("used %d after three tries of one request, want 7", got)
	}
	e.restart()
	if err := consume(7); err != nil {
		t.Fatal(err)
	}
	if got := used(t, e); got != 7 {
		t.Fatalf("used %d after a retry across a restart, want 7", got)
	}
	if err := consume(8); code(err) != "invalid_argument" {
		t.Fatalf("the same id with another amount: want invalid_argument, got %v", err)
	}
	if err := call(e.client(keyA).EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{Name: "t", RequestId: "hook-2"}))); err != nil {
		t.Fatal(err)
	}
	if n := len(e.store.Engine.Dump().Sessions); n != 1 {
		t.Fatalf("want one principal session for the key across calls and restarts, got %d sessions", n)
	}
}

// TestRetryWhileInFlight: an Acquire retried with its request id while the
// first attempt still waits in the queue gets the first attempt's lease,
// not a second place in the queue.
func TestRetryWhileInFlight(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	holder, _ := e.session(keyA)
	var held []uint64
	for range 2 {
		l, err := holder.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l.Msg.Lease.Id)
	}
	worker, _ := e.session(keyA)
	req := &governorv1.AcquireRequest{Class: "db", RequestId: "acq-1"}
	type answer struct {
		lease uint64
		err   error
	}
	answers := make(chan answer, 2)
	try := func() {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		res, err := worker.Acquire(ctx, connect.NewRequest(req))
		if err != nil {
			answers <- answer{err: err}
			return
		}
		answers <- answer{lease: res.Msg.Lease.Id}
	}
	go try()
	eventually(t, "the first attempt to queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	go try()
	eventually(t, "the retry to arrive", func() bool {
		return e.logs.count("a retry waits for the attempt in flight") == 1 || e.store.Engine.Stats().Waiting["db"] == 2
	})
	if err := call(holder.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: held[0]}))); err != nil {
		t.Fatal(err)
	}
	first, second := <-answers, <-answers
	if first.err != nil || second.err != nil || first.lease != second.lease {
		t.Fatalf("want one lease for both attempts, got %+v and %+v (%v, %v)", first, second, first.err, second.err)
	}
	if st := e.store.Engine.Stats(); st.Leases != 2 || st.Waiting["db"] != 0 {
		t.Fatalf("want 2 leases and no waiter, got %+v", st)
	}
}

// TestRepeatedConsumeAnswersFirst: a consume repeated with its request id
// answers what the first attempt answered, even after other charges and a
// restart of governord, and charges once.
func TestRepeatedConsumeAnswersFirst(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	consume := func(amount int64, id string) *governorv1.ConsumeResponse {
		t.Helper()
		res, err := e.client(keyA).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{Resource: "tokens", Amount: amount, RequestId: id}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg
	}
	first := consume(3, "r1")
	if first.GetRemaining() != 97 {
		t.Fatalf("first answer: %v, want 97 remaining", first)
	}
	consume(40, "r2")
	if again := consume(3, "r1"); !proto.Equal(again, first) {
		t.Fatalf("repeated: %v, want the first answer %v", again, first)
	}
	e.restart()
	if again := consume(3, "r1"); !proto.Equal(again, first) {
		t.Fatalf("repeated after a restart: %v, want the first answer %v", again, first)
	}
	if got := used(t, e); got != 43 {
		t.Fatalf("used %d, want 43", got)
	}
}
