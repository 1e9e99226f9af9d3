package governor

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// lostTwice loses the next two replies to name and checks, after call,
// that it was sent three times with one request id.
func lostTwice(t *testing.T, rt *recordingTransport, name string, call func() error) {
	t.Helper()
	before := len(rt.sent(name))
	rt.loseReplies(name, 2)
	if err := call(); err != nil {
		t.Fatalf("%s whose first two replies were lost: %v", name, err)
	}
	ids := rt.sent(name)[before:]
	if len(ids) != 3 || ids[0] != ids[1] || ids[1] != ids[2] {
		t.Fatalf("%s request ids %q, want one id sent three times", name, ids)
	}
}

// Every call that changes state whose replies are lost is sent again with
// the same request id until one is answered, and governord applies it
// once: nothing is charged, granted, created or ended twice.
func TestLostRepliesAreSentAgainAndAppliedOnce(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	rt := newRecordingTransport()
	c := dial(t, g.addr, WithHTTPClient(&http.Client{Transport: rt}))
	ctx, tk := task(t, c, Spec{Name: "once", Quotas: map[string]int64{"http": 100}, Limits: map[string]int64{"db": 5}})

	var b Balance
	lostTwice(t, rt, "Consume", func() (err error) { b, err = Consume(ctx, "http", 3); return err })
	if u := used(t, g.addr, tk.ID(), "http"); u != 3 || b.Remaining != 97 {
		t.Fatalf("consume of 3 whose replies were lost: %d used, %d remaining; want 3 and 97", u, b.Remaining)
	}

	var l *Lease
	lostTwice(t, rt, "Acquire", func() (err error) { l, err = Acquire(ctx, "db"); return err })
	if h := describe(t, g.addr, tk.ID()).Classes["db"].GetHeld(); h != 1 {
		t.Fatalf("%d db leases held after one acquire whose replies were lost", h)
	}
	lostTwice(t, rt, "Release", func() error { return l.Release(Report{}) })
	if h := describe(t, g.addr, tk.ID()).Classes["db"].GetHeld(); h != 0 {
		t.Fatalf("%d db leases held after the release", h)
	}

	var sub *Task
	lostTwice(t, rt, "CreateNode", func() (err error) { _, sub, err = NewTask(ctx, Spec{Name: "child"}); return err })
	if n := describe(t, g.addr, tk.ID()).ChildrenCount; n != 1 {
		t.Fatalf("%d children after one create whose replies were lost", n)
	}
	lostTwice(t, rt, "CancelNode", func() error { return sub.Cancel("test") })
	if s := describe(t, g.addr, sub.ID()).State; s != governorv1.NodeState_NODE_STATE_CANCELLED {
		t.Fatalf("the cancelled subtask is %s", s)
	}
}

// A call that changes state given up before any answer says that its
// outcome is unknown and which request id to repeat; the repeat applies
// nothing more and answers.
func TestAStateChangeGivenUpWithoutAnswerSaysItsOutcomeIsUnknown(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	rt := newRecordingTransport()
	c := dial(t, g.addr, WithHTTPClient(&http.Client{Transport: rt}))
	ctx, tk := task(t, c, Spec{Name: "unknown", Quotas: map[string]int64{"http": 100}})

	rt.loseReplies("Consume", 1<<30)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := Consume(short, "http", 3)
	cancel()
	rt.loseReplies("Consume", 0)
	var ue *UnknownOutcomeError
	if !errors.As(err, &ue) || !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("consume that was never answered: %v; want an UnknownOutcomeError matching ErrUnavailable and the deadline", err)
	}
	ids := rt.sent("Consume")
	if len(ids) < 2 || ue.RequestID != ids[0] || ids[len(ids)-1] != ids[0] {
		t.Fatalf("request ids sent %q, error names %q; want one id sent again and again", ids, ue.RequestID)
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 3 {
		t.Fatalf("%d used after %d sends of one consume of 3", u, len(ids))
	}
	b, err := Consume(WithRequestID(ctx, ue.RequestID), "http", 3)
	if err != nil || b.Remaining != 97 {
		t.Fatalf("the repeat by request id: %+v, %v; want the first answer, 97 remaining", b, err)
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 3 {
		t.Fatalf("%d used after the repeat, want 3", u)
	}
	if _, err := Consume(WithRequestID(ctx, ue.RequestID), "http", 4); !errors.Is(err, ErrInvalid) {
		t.Fatalf("the id with another amount: %v, want ErrInvalid", err)
	}
}

// A caller-set request id makes a call retried from a fresh attempt of the
// caller's apply once; the contexts NewTask returns do not inherit it.
func TestCallerSetRequestIDs(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, tk := task(t, c, Spec{Name: "caller-ids", Quotas: map[string]int64{"http": 100}})
	for range 3 {
		if _, err := Consume(WithRequestID(ctx, "job-7"), "http", 2); err != nil {
			t.Fatal(err)
		}
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 2 {
		t.Fatalf("%d used by three consumes of 2 with one id, want 2", u)
	}
	sub, st, err := NewTask(WithRequestID(ctx, "make-sub"), Spec{Name: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := Consume(sub, "http", 1); err != nil {
			t.Fatal(err)
		}
	}
	if u := used(t, g.addr, st.ID(), "http"); u != 2 {
		t.Fatalf("%d used by two consumes of 1 in the subtask's context, want 2: it inherited the id", u)
	}
}
