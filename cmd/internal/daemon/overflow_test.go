package daemon

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// TestNumbersThatWouldWrapAreRefusedAndTheRecordLoads sends, through the
// API of a durable governord that snapshots after every event, the numbers
// that once wrapped: the most an int64 holds consumed twice on a resource
// nobody caps, and a max_hold of 10,000 years. The second consume and the
// acquire are refused with InvalidArgument naming the field; governord then
// restarts from the same file and finds the first consume counted.
func TestNumbersThatWouldWrapAreRefusedAndTheRecordLoads(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
	ctx := context.Background()
	cfg := testConfig(url)
	cfg.SnapshotEvery = 1
	d := startDaemon(t, cfg, Options{})
	api := newJSONAPI(d.URL())
	tok, err := api.session(ctx, testTeamKey)
	must(t, err)
	task, err := api.ensure(ctx, tok, "task")
	must(t, err)
	most := strconv.FormatInt(math.MaxInt64, 10)
	consume := map[string]any{"node_id": task, "resource": "tokens", "amount": most}
	must(t, api.call(ctx, tok, "Consume", consume, nil))
	wantInvalid(t, api.call(ctx, tok, "Consume", consume, nil), "amount")
	wantInvalid(t, api.call(ctx, tok, "EnsureNode", map[string]any{"name": "more",
		"charge": map[string]any{"resource": "tokens", "amount": "1"}}, nil), "charge.amount")
	wantInvalid(t, api.call(ctx, tok, "Acquire", map[string]any{"node_id": task, "class": "db", "max_hold": "315576000000s"}, nil), "max_hold")
	must(t, d.Stop(ctx))

	d = startDaemon(t, cfg, Options{}) // the same file
	if used := describe(t, d.store, engine.ID(task)).Quotas["tokens"].Used; used != math.MaxInt64 {
		t.Fatalf("after a restart the task has used %d tokens, want %d", used, int64(math.MaxInt64))
	}
}

// wantInvalid fails the test unless err is InvalidArgument naming field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var ce *callError
	if !errors.As(err, &ce) || ce.Code != "invalid_argument" || !strings.Contains(ce.Message, field) {
		t.Fatalf("got %v, want invalid_argument naming %s", err, field)
	}
}
