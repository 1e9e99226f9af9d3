package tui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/charmbracelet/x/exp/teatest"

	"governor.dev/governor/cmd/internal/tui"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestScreenEscapesNames checks that a name holding terminal escapes is
// drawn with them escaped, never sent to the terminal as they are.
func TestScreenEscapesNames(t *testing.T) {
	w := newWorld(t)
	_, err := w.key.EnsureNode(context.Background(), connect.NewRequest(&governorv1.EnsureNodeRequest{Name: "evil\x1b]0;owned\x07"}))
	must(t, err)
	tm := teatest.NewTestModel(t, tui.New(w.api, tui.Options{SessionTTL: w.ttl}), teatest.WithInitialTermSize(160, 40))
	see(t, tm, `evil\x1b]0;owned\a`)
	tm.Send(key("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	out := tm.FinalModel(t).View()
	for _, raw := range []string{"\x1b]0;owned", "\x07"} {
		if strings.Contains(out, raw) {
			t.Fatalf("the screen holds %q unescaped", raw)
		}
	}
}
