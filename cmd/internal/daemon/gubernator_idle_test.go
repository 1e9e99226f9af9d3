package daemon

import (
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/testclock"
)

// TestGubernatorIdleKeysAreForgotten sets gubernator.idle_ttl and finds an
// idle key and its name forgotten by the reaper, with the next request for
// it answered as for a new key.
func TestGubernatorIdleKeysAreForgotten(t *testing.T) {
	clock := testclock.New(guberStart)
	cfg := guberConfig("")
	cfg.Gubernator.IdleTTL = time.Minute
	d := startDaemon(t, cfg, Options{Clock: clock})
	url := d.URL() + "/v1/GetRateLimits"
	body := `{"requests":[{"name":"requests_per_sec","unique_key":"a","hits":1,"limit":10,"duration":1000}]}`
	want := func(at time.Time) string {
		return "UNDER_LIMIT remaining=9 reset=" + ms(at.Add(time.Second)) + ` retry_after=0 error=""`
	}
	if got := summary(curl(t, "POST", url, testTeamKey, body).responses(t)[0]); got != want(guberStart) {
		t.Fatalf("first request: %s\n          want %s", got, want(guberStart))
	}
	tenant := d.tenants["team-a"]
	children := func() int {
		_, kids, _, err := d.store.Engine.Describe(&engine.Call{}, tenant, &engine.Page{})
		if err != nil {
			t.Fatal(err)
		}
		return len(kids)
	}
	if n := children(); n != 1 {
		t.Fatalf("the tenant has %d children, want the name node", n)
	}
	clock.Advance(time.Minute + time.Second) // full after 1s, then idle for a minute
	for deadline := time.Now().Add(10 * time.Second); children() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle key and its name are still in the tree 10s after they became due")
		}
	}
	at := guberStart.Add(time.Minute + time.Second)
	if got := summary(curl(t, "POST", url, testTeamKey, body).responses(t)[0]); got != want(at) {
		t.Fatalf("request for the forgotten key: %s\n          want %s", got, want(at))
	}
}
