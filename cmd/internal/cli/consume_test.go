package cli_test

import "testing"

// A consume with a request id goes through the key's durable principal,
// so the id outlives the process: three runs charge once, and the id with
// another amount is refused with exit 1.
func TestConsumeRequestIDHoldsAcrossRuns(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	env := envFor(d, teamAKey)
	usedNow := func() int64 { return a.child(0, "team-a").GetResources()["tool_calls"].GetUsed() }

	for run := 1; run <= 2; run++ {
		mustContain(t, governor(t, env, nil, "consume", ".", "tool_calls", "1", "--request-id", "r1"), 0, "consumed 1 tool_calls")
		if u := usedNow(); u != 1 {
			t.Fatalf("run %d of one consume of 1 with request id r1: %d used, want 1", run, u)
		}
	}
	mustContain(t, governor(t, env, nil, "consume", ".", "tool_calls", "2", "--request-id", "r1"), 1, "request id was used before with different arguments")
	if u := usedNow(); u != 1 {
		t.Fatalf("a refused reuse of r1 changed the use to %d", u)
	}
}
