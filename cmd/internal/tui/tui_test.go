package tui_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"connectrpc.com/connect"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/daemon"
	"governor.dev/governor/cmd/internal/tui"
	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

const teamKey = "team-a-key-0123456789"

// world is a governord with one tenant and two runs: run-a has used 4 of
// its 5 tool calls, run-b none.
type world struct {
	t     *testing.T
	api   governorv1connect.GovernorServiceClient // the tenant's session
	key   governorv1connect.GovernorServiceClient // the tenant's key
	runA  uint64
	runB  uint64
	ttl   time.Duration
	scope uint64
}

func newWorld(t *testing.T) *world {
	cfg := config.Default()
	cfg.Listen, cfg.MetricsListen, cfg.DatabaseURL = "127.0.0.1:0", "", ""
	cfg.Tenants = []config.Tenant{{Name: "team-a", APIKey: teamKey, Weight: 1,
		Defaults: config.Defaults{Quotas: map[string]int64{"tool_calls": 5}}}}
	d, err := daemon.Start(context.Background(), cfg, daemon.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = d.Stop(ctx)
	})
	conn := clientconn.Config{Addr: d.Addr().String(), APIKey: teamKey}
	key, err := conn.API(nil)
	must(t, err)
	ctx := context.Background()
	w := &world{t: t, key: key}
	for _, name := range []string{"run-a", "run-b"} {
		res, err := key.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{Name: name}))
		must(t, err)
		if name == "run-a" {
			w.runA = res.Msg.GetNode().GetId()
		} else {
			w.runB = res.Msg.GetNode().GetId()
		}
	}
	_, err = key.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: w.runA, Resource: "tool_calls", Amount: 4}))
	must(t, err)
	s, err := key.OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{}))
	must(t, err)
	token := s.Msg.GetToken()
	w.ttl, w.scope = s.Msg.GetTtl().AsDuration(), s.Msg.GetScopeNodeId()
	w.api, err = conn.API(func() string { return token })
	must(t, err)
	return w
}

func (w *world) node(id uint64) *governorv1.NodeInfo {
	res, err := w.api.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: id}))
	must(w.t, err)
	return res.Msg.GetNode()
}

// eventually waits until the server reports what cond wants.
func (w *world) eventually(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("governord never reported %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// see waits until the screen has drawn every part.
func see(t *testing.T, tm *teatest.TestModel, parts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, p := range parts {
			if !bytes.Contains(b, []byte(p)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// seeLine waits until one line of the screen holds every part: a row, not
// the status line, when parts name the row and a state.
func seeLine(t *testing.T, tm *teatest.TestModel, parts ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, line := range bytes.Split(b, []byte("\n")) {
			all := true
			for _, p := range parts {
				all = all && bytes.Contains(line, []byte(p))
			}
			if all {
				return true
			}
		}
		return false
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func key(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "ctrl+u":
		return tea.KeyMsg{Type: tea.KeyCtrlU}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func TestScreenEditsCapsDefaultsAndCancelsThroughGovernord(t *testing.T) {
	w := newWorld(t)
	tm := teatest.NewTestModel(t, tui.New(w.api, tui.Options{SessionTTL: w.ttl}), teatest.WithInitialTermSize(160, 40))
	see(t, tm, "governor · team-a", "run-a", "tool_calls 4/5", "run-b", "tool_calls 0/5")

	// Raise run-a's spent budget: the server then reports the new cap, and
	// the screen shows what the server reports.
	tm.Send(key("e"))
	see(t, tm, "Caps of run-a", "quota tool_calls")
	tm.Send(key("ctrl+u"))
	tm.Type("800")
	tm.Send(key("enter"))
	w.eventually("run-a's cap raised to 800", func() bool { return w.node(w.runA).GetResources()["tool_calls"].GetCap() == 800 })
	see(t, tm, "tool_calls 4/800", "caps of run-a saved")

	// A value that is not a cap is refused in the form, and nothing changes.
	tm.Send(key("e"))
	see(t, tm, "Caps of run-a")
	tm.Send(key("ctrl+u"))
	tm.Type("lots")
	tm.Send(key("enter"))
	see(t, tm, `"lots" is not a cap`)
	tm.Send(key("esc"))
	see(t, tm, "› run-a")

	// Empty removes the cap.
	tm.Send(key("e"))
	see(t, tm, "Caps of run-a")
	tm.Send(key("ctrl+u"))
	tm.Send(key("enter"))
	w.eventually("run-a's cap removed", func() bool { return w.node(w.runA).GetResources()["tool_calls"].Cap == nil })

	// The defaults new runs start with.
	tm.Send(key("d"))
	see(t, tm, "Defaults new children of team-a", "quota tool_calls")
	tm.Send(key("ctrl+u"))
	tm.Type("7")
	tm.Send(key("down"))
	tm.Type("agents=2")
	tm.Send(key("enter"))
	w.eventually("new defaults", func() bool {
		q := w.node(w.scope).GetDefaults().GetQuotas()
		return q["tool_calls"] == 7 && q["agents"] == 2
	})
	see(t, tm, "quotas agents=2 tool_calls=7")

	// Cancel run-b, after saying no once.
	tm.Send(key("down"))
	tm.Send(key("c"))
	see(t, tm, "Cancel run-b and everything under it?")
	tm.Send(key("n"))
	see(t, tm, "not cancelled")
	tm.Send(key("c"))
	see(t, tm, "Cancel run-b")
	tm.Send(key("y"))
	w.eventually("run-b cancelled", func() bool {
		return w.node(w.runB).GetState() == governorv1.NodeState_NODE_STATE_CANCELLED
	})
	// The status says so before the screen has read the tree again; the
	// next c must find run-b's own row ended.
	seeLine(t, tm, "run-b ", " cancelled ")
	tm.Send(key("c"))
	see(t, tm, "run-b has already ended")

	// Open run-a, see its (empty) children, and come back.
	tm.Send(key("r"))
	tm.Send(key("k"))
	tm.Send(key("enter"))
	see(t, tm, "governor · team-a / run-a", "no children")
	tm.Send(key("esc"))
	see(t, tm, "run-b")

	tm.Send(key("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

func TestScreenFollowsUseWithoutAKey(t *testing.T) {
	w := newWorld(t)
	tm := teatest.NewTestModel(t, tui.New(w.api, tui.Options{SessionTTL: w.ttl}), teatest.WithInitialTermSize(160, 40))
	see(t, tm, "tool_calls 4/5")
	_, err := w.key.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: w.runA, Resource: "tool_calls", Amount: 1}))
	must(t, err)
	see(t, tm, "tool_calls 5/5")
	tm.Send(key("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
