package daemon

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/testclock"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestARunOutHoldIsFreeBeforeTheReaperRuns sets reap_interval to an hour
// and acquires team-a's one db slot with a max_hold of 0.2s: half a second
// later describe shows nothing held and a second acquire is granted at
// once, though the reaper has not run since.
func TestARunOutHoldIsFreeBeforeTheReaperRuns(t *testing.T) {
	clock := testclock.New(guberStart)
	cfg := testConfig("")
	cfg.ReapInterval = time.Hour
	cfg.Tenants[0].Limits = map[string]int64{"db": 1}
	d := startDaemon(t, cfg, Options{Clock: clock})
	client := newFuzzWorld(d, clock).client
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var tokens []string
	for range 2 {
		r, err := call(ctx, testTeamKey, client.OpenSession, &governorv1.OpenSessionRequest{})
		must(t, err)
		tokens = append(tokens, r.Token)
	}
	_, err := call(ctx, tokens[0], client.Acquire, &governorv1.AcquireRequest{Class: "db", MaxHold: durationpb.New(200 * time.Millisecond)})
	must(t, err)
	clock.Advance(500 * time.Millisecond)
	got, err := call(ctx, tokens[1], client.GetNode, &governorv1.GetNodeRequest{})
	must(t, err)
	if held := got.Node.Classes["db"].GetHeld(); held != 0 {
		t.Fatalf("describe 0.5s after a 0.2s hold shows %d db held, want 0", held)
	}
	actx, acancel := context.WithTimeout(ctx, 2*time.Second)
	defer acancel()
	if _, err := call(actx, tokens[1], client.Acquire, &governorv1.AcquireRequest{Class: "db"}); err != nil {
		t.Fatalf("second acquire 0.5s after a 0.2s hold: %v, want a lease at once", err)
	}
}
