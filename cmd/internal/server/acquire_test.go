package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// fill takes both db slots of tenant a and returns the holder and its
// leases.
func fill(t *testing.T, e *env) (holder governorv1connect.GovernorServiceClient, leases []uint64) {
	t.Helper()
	cl, _ := e.session(keyA)
	for range 2 {
		l, err := cl.Acquire(context.Background(), connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l.Msg.Lease.Id)
	}
	return cl, leases
}

// TestAcquireCancelLeaksNothing: a waiting Acquire whose caller gives up
// leaves the queue, and the slot goes to the next waiter.
func TestAcquireCancelLeaksNothing(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	holder, held := fill(t, e)

	quitter, _ := e.session(keyA)
	qctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		gaveUp <- call(quitter.Acquire(qctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db", RequestId: "q"})))
	}()
	eventually(t, "the quitter to queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	cancel()
	if err := <-gaveUp; code(err) != "canceled" {
		t.Fatalf("the cancelled acquire: want canceled, got %v", err)
	}
	eventually(t, "the quitter to leave the queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 0 })

	next, nextSess := e.session(keyA)
	granted := make(chan *governorv1.Lease, 1)
	go func() {
		res, err := next.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
		if err != nil {
			t.Error(err)
			granted <- nil
			return
		}
		granted <- res.Msg.Lease
	}()
	eventually(t, "the next waiter to queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	if err := call(holder.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: held[0]}))); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-granted:
		if l == nil || l.SessionId != nextSess.SessionId {
			t.Fatalf("the freed slot went to %+v, want session %d", l, nextSess.SessionId)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the freed slot never reached the next waiter")
	}
	if st := e.store.Engine.Stats(); st.Leases != 2 || st.Waiting["db"] != 0 {
		t.Fatalf("want the holder's remaining lease and the next waiter's, got %+v", st)
	}
	// The quitter's request id was not used up: a retry queues afresh.
	rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer rcancel()
	if err := call(quitter.Acquire(rctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db", RequestId: "q"}))); code(err) != "deadline_exceeded" {
		t.Fatalf("the retry should wait for a slot, got %v", err)
	}
}

// TestCloseEndsWaits: Close ends waiting acquires and open streams with
// Unavailable.
func TestCloseEndsWaits(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	fill(t, e)
	waiter, _ := e.session(keyA)
	acquired := make(chan error, 1)
	go func() {
		acquired <- call(waiter.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"})))
	}()
	stream, err := waiter.WatchNode(ctx, connect.NewRequest(&governorv1.WatchNodeRequest{}))
	if err != nil || !stream.Receive() {
		t.Fatalf("watch: %v %v", err, stream.Err())
	}
	eventually(t, "the acquire to queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	e.srv.Close()
	if err := <-acquired; code(err) != "unavailable" {
		t.Fatalf("waiting acquire after Close: want unavailable, got %v", err)
	}
	if stream.Receive() || code(stream.Err()) != "unavailable" {
		t.Fatalf("stream after Close: want unavailable, got %v", stream.Err())
	}
	if err := call(waiter.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{}))); code(err) != "unavailable" {
		t.Fatalf("a call after Close: want unavailable, got %v", err)
	}
	if st := e.store.Engine.Stats(); st.Waiting["db"] != 0 {
		t.Fatalf("Close left a waiter in the queue: %+v", st)
	}
}

// TestGetNodeShowsWaiting: GetNode counts the acquires queued on a node,
// and the count falls when one gives up.
func TestGetNodeShowsWaiting(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	ctx := context.Background()
	holder, _ := fill(t, e)
	waiting := func() int64 {
		res, err := holder.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg.Node.GetClasses()["db"].GetWaiting()
	}
	if n := waiting(); n != 0 {
		t.Fatalf("waiting %d before anyone queued", n)
	}
	waiter, _ := e.session(keyA)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- call(waiter.Acquire(wctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"})))
	}()
	eventually(t, "the acquire to queue", func() bool { return e.store.Engine.Stats().Waiting["db"] == 1 })
	if n := waiting(); n != 1 {
		t.Fatalf("GetNode shows %d waiting, want the 1 queued", n)
	}
	cancel()
	<-done
	eventually(t, "the waiter to leave", func() bool { return e.store.Engine.Stats().Waiting["db"] == 0 })
	if n := waiting(); n != 0 {
		t.Fatalf("GetNode shows %d waiting after the waiter left", n)
	}
}

// TestAcquireTooShortToRecordWritesNothing: once grants have recently
// taken 40ms to be recorded, an acquire whose deadline is shorter is
// refused with deadline_exceeded before the engine grants, so neither a
// grant nor the release giving it back is written; one with time enough
// is granted. A real grant's time to the record is measured.
func TestAcquireTooShortToRecordWritesNothing(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	cl, _ := e.session(keyA)
	l, err := cl.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: l.Msg.Lease.Id})); err != nil {
		t.Fatal(err)
	}
	if f := e.srv.floor.get(); f <= 0 {
		t.Fatalf("after a grant the floor is %s, want the time it took to be recorded", f)
	}
	for range floorSamples {
		e.srv.floor.note(40 * time.Millisecond)
	}
	before := e.store.Engine.Seq()
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	err = call(cl.Acquire(short, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"})))
	if code(err) != "deadline_exceeded" {
		t.Fatalf("an acquire with 5ms to go: want deadline_exceeded, got %v", err)
	}
	if after := e.store.Engine.Seq(); after != before {
		t.Fatalf("the refused acquire wrote %d events, want none", after-before)
	}
	long, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	if err := call(cl.Acquire(long, connect.NewRequest(&governorv1.AcquireRequest{Class: "db"}))); err != nil {
		t.Fatalf("an acquire with 5s to go: %v", err)
	}
}

// TestRecordFloorIsTheFastestRecentGrant: the floor is 0 until a grant is
// noted, then the shortest of the last 16.
func TestRecordFloorIsTheFastestRecentGrant(t *testing.T) {
	var f recordFloor
	if got := f.get(); got != 0 {
		t.Fatalf("with no grant the floor is %s, want 0", got)
	}
	for _, d := range []time.Duration{5, 3, 9} {
		f.note(d * time.Millisecond)
	}
	if got := f.get(); got != 3*time.Millisecond {
		t.Fatalf("after 5ms, 3ms, 9ms the floor is %s, want 3ms", got)
	}
	for range floorSamples {
		f.note(10 * time.Millisecond)
	}
	if got := f.get(); got != 10*time.Millisecond {
		t.Fatalf("after 16 grants of 10ms the floor is %s, want 10ms", got)
	}
}

// TestAcquireAndTryAcquireBoundTheHold: both calls refuse a max hold past
// 366 days, which added to now would wrap, with invalid_argument naming
// max_hold, and grant at the bound.
func TestAcquireAndTryAcquireBoundTheHold(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	cl, _ := e.session(keyA)
	for _, tc := range []struct {
		hold *durationpb.Duration
		want string
	}{
		{&durationpb.Duration{Seconds: 315576000000}, "invalid_argument"},
		{durationpb.New(engine.MaxSpan + 1), "invalid_argument"},
		{durationpb.New(engine.MaxSpan), "ok"},
	} {
		hold := tc.hold
		errs := map[string]error{
			"Acquire":    call(cl.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{Class: "db", MaxHold: hold}))),
			"TryAcquire": call(cl.TryAcquire(ctx, connect.NewRequest(&governorv1.TryAcquireRequest{Class: "db", MaxHold: hold}))),
		}
		for name, err := range errs {
			if code(err) != tc.want || tc.want != "ok" && !strings.Contains(err.Error(), "max_hold") {
				t.Errorf("%s with max_hold %v: %v, want %q naming max_hold", name, tc.hold.AsDuration(), err, tc.want)
			}
		}
	}
}
