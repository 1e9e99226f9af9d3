package tui_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/charmbracelet/x/exp/teatest"

	"governor.dev/governor/cmd/internal/tui"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// The x key explains the selected node: its spent quota, and nothing else.
func TestScreenExplainsTheSelectedNode(t *testing.T) {
	w := newWorld(t)
	_, err := w.key.Consume(context.Background(), connect.NewRequest(&governorv1.ConsumeRequest{NodeId: w.runA, Resource: "tool_calls", Amount: 1}))
	must(t, err)
	tm := teatest.NewTestModel(t, tui.New(w.api, tui.Options{SessionTTL: w.ttl}), teatest.WithInitialTermSize(160, 40))
	see(t, tm, "› run-a", "tool_calls 5/5")
	tm.Send(key("x"))
	see(t, tm, "why run-a waits or is refused", `quota on "run-a"`, "5 of 5 used", "estimate: unknown")
	tm.Send(key("esc"))
	see(t, tm, "› run-a", "run-b", "tool_calls 0/5")
	tm.Send(key("down"))
	tm.Send(key("x"))
	see(t, tm, "why run-b waits or is refused", "nothing binds")
	tm.Send(key("esc"))
	tm.Send(key("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
