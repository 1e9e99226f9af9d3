package governor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// consumeOnce dials list, makes a task and consumes 1 of http in it,
// checking on governord that exactly 1 was charged.
func consumeOnce(t *testing.T, g *governord, list string) {
	t.Helper()
	c := dial(t, list)
	ctx, tk := task(t, c, Spec{Name: "find", Quotas: map[string]int64{"http": 10}})
	if _, err := Consume(ctx, "http", 1); err != nil {
		t.Fatalf("consume through %s: %v", list, err)
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 1 {
		t.Fatalf("%d used after one consume of 1 through %s", u, list)
	}
}

// A client finds the leader from any address of its list: one that names
// the leader, one where nothing listens, or the leader itself, in any
// order; the leader need not be listed when a node names it.
func TestTheClientFindsTheLeaderFromAnyAddress(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	follower := newFront(t, g.addr)
	follower.follower(g.addr)
	down := refusing(t)
	for _, list := range [][]string{
		{follower.addr, g.addr},
		{g.addr, follower.addr},
		{down, g.addr},
		{down, follower.addr},
		{follower.addr, down},
	} {
		consumeOnce(t, g, strings.Join(list, ","))
	}
	if n := follower.calls(governorv1connect.GovernorServiceOpenSessionProcedure); n != 3 {
		t.Fatalf("the follower was asked to open %d sessions, want 3: one per list that reaches it before the leader", n)
	}
}

// When the leader changes, the client's calls, heartbeats and watch
// stream move to the new one and its session goes on: same session, its
// task still live, its budget intact, and the end of the task, decided
// after the switch, still heard.
func TestAFailoverKeepsTheSession(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	a, b := newFront(t, g.addr), newFront(t, g.addr)
	b.follower(a.addr)
	c := dial(t, a.addr+","+b.addr, WithSessionTTL(2*time.Second))
	ctx, tk := task(t, c, Spec{Name: "failover", Quotas: map[string]int64{"http": 10}})
	if _, err := Consume(ctx, "http", 1); err != nil {
		t.Fatal(err)
	}
	id := c.SessionID()

	b.lead()
	a.follower(b.addr)
	if _, err := Consume(ctx, "http", 2); err != nil {
		t.Fatalf("consume after the leader moved: %v", err)
	}
	waitFor(t, "heartbeats and the watch stream at the new leader", func() bool {
		return b.calls(governorv1connect.GovernorServiceHeartbeatProcedure) >= 2 &&
			b.calls(governorv1connect.GovernorServiceWatchNodeProcedure) >= 1
	})
	if c.SessionID() != id || c.Err() != nil || ctx.Err() != nil {
		t.Fatalf("after the switch: session %d (was %d), client %v, task %v; want the same live session and task",
			c.SessionID(), id, c.Err(), context.Cause(ctx))
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 3 {
		t.Fatalf("%d used, want 3", u)
	}
	if err := adminCancel(t, g.addr, tk.ID()); err != nil {
		t.Fatal(err)
	}
	if err := done(t, ctx, 5*time.Second); !errors.Is(err, ErrTaskEnded) {
		t.Fatalf("the task cancelled after the switch ended its context with %v, want ErrTaskEnded", err)
	}
	if c.SessionID() != id {
		t.Fatalf("session %d after the task ended, was %d", c.SessionID(), id)
	}
}

// A call cut off after the node received it, so that the client cannot
// know whether it was applied, is sent to the next address with the same
// request id and charged once.
func TestAnUnknownOutcomeAcrossAFailoverIsChargedOnce(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	cutter := newFront(t, g.addr)
	c := dial(t, cutter.addr+","+g.addr)
	ctx, tk := task(t, c, Spec{Name: "cut", Quotas: map[string]int64{"http": 100}})
	cutter.cut(governorv1connect.GovernorServiceConsumeProcedure, 1)
	b, err := Consume(ctx, "http", 3)
	if err != nil {
		t.Fatalf("consume whose first answer was cut off: %v", err)
	}
	if n := cutter.calls(governorv1connect.GovernorServiceConsumeProcedure); n != 1 {
		t.Fatalf("the node that cut the answer saw %d consumes, want 1", n)
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 3 || b.Remaining != 97 {
		t.Fatalf("one consume of 3 sent twice: %d used, %d remaining; want 3 and 97", u, b.Remaining)
	}
}

// A leader that stops answering without closing its connections, as a
// paused process does, is passed: its connection's ping goes unanswered,
// the connection is closed, and the call goes to the next node with its
// request id, applied once, in the same session.
func TestAStoppedLeaderIsPassed(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	stopped := newFreezer(t, g.addr)
	c := dial(t, stopped.addr+","+g.addr)
	ctx, tk := task(t, c, Spec{Name: "stopped", Quotas: map[string]int64{"http": 100}})
	id := c.SessionID()
	stopped.frozen.Store(true)
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	b, err := Consume(bounded, "http", 3)
	if err != nil {
		t.Fatalf("consume sent to a stopped leader: %v", err)
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 3 || b.Remaining != 97 {
		t.Fatalf("one consume of 3: %d used, %d remaining; want 3 and 97", u, b.Remaining)
	}
	if c.SessionID() != id || ctx.Err() != nil {
		t.Fatalf("session %d (was %d), task %v after the leader stopped; want the same live session and task", c.SessionID(), id, context.Cause(ctx))
	}
}

// With every address down, Dial fails with ErrUnavailable naming every
// address it tried.
func TestEveryAddressDownNamesTheAddressesTried(t *testing.T) {
	t.Parallel()
	one, two := refusing(t), refusing(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, WithAddr(one+","+two), WithAPIKey(teamKey))
	if err == nil {
		_ = c.Close()
		t.Fatal("dial with every address down succeeded")
	}
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), one) || !strings.Contains(err.Error(), two) {
		t.Fatalf("dial with every address down: %v; want ErrUnavailable naming %s and %s", err, one, two)
	}
}

// A malformed address list is refused before anything is sent, with an
// error saying what is wrong and what is allowed.
func TestABadAddressListIsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ list, want string }{
		{"127.0.0.1:1,,127.0.0.1:2", "empty entry (number 2); separate host:port addresses with single commas"},
		{"127.0.0.1:1,", "empty entry (number 2)"},
		{"127.0.0.1:1, 127.0.0.1:1", "names 127.0.0.1:1 twice; list each governord once"},
		{"127.0.0.1:1,gov", `address "gov" is not host:port`},
		{"127.0.0.1:1,gov:0", "a port is a number from 1 to 65535"},
		{"http://a:1,https://b:2", "mixes http:// and https://"},
	} {
		_, err := Dial(context.Background(), WithAddr(c.list), WithAPIKey(teamKey))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Dial(%q): %v; want ErrInvalid saying %q", c.list, err, c.want)
		}
	}
}

// waitFor polls cond until it holds, failing t after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
