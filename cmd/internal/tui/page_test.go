package tui_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/charmbracelet/x/exp/teatest"

	"governor.dev/governor/cmd/internal/tui"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestScreenPagesChildren checks that the screen shows a wide node's
// children a page of 200 at a time, and that n and p move between pages.
func TestScreenPagesChildren(t *testing.T) {
	w := newWorld(t)
	for i := range 450 {
		_, err := w.key.EnsureNode(context.Background(), connect.NewRequest(&governorv1.EnsureNodeRequest{Name: fmt.Sprintf("c%03d", i)}))
		must(t, err)
	}
	tm := teatest.NewTestModel(t, tui.New(w.api, tui.Options{SessionTTL: w.ttl}), teatest.WithInitialTermSize(160, 400))
	see(t, tm, "run-a", "c197", "page 1 of the 452 children")
	tm.Send(key("n"))
	see(t, tm, "c198", "c397", "page 2 of the 452 children")
	tm.Send(key("n"))
	see(t, tm, "c398", "c449", "page 3 of the 452 children")
	tm.Send(key("p"))
	see(t, tm, "c198", "page 2 of the 452 children")
	tm.Send(key("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
