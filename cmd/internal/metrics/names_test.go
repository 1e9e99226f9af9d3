package metrics

import (
	"fmt"
	"strings"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// TestManyNamesKeepTheScrapeSmall: one tenant consuming 20,000 resource
// names and acquiring 500 class names adds at most namedSeries series per
// metric, plus one otherName sum: the names the tenant and the root cap keep
// series of their own, the most used others too, the rest are summed, and
// every unit is counted once. Among names used alike, the first by name
// keep series.
func TestManyNamesKeepTheScrapeSmall(t *testing.T) {
	r := newRig(t)
	e := r.store.Engine
	r.must(&engine.Call{}, func(c *engine.Call) error { return e.SetQuota(c, engine.RootID, "http", ptr(1<<40)) })
	a := r.tenant("a", engine.Caps{Quotas: map[string]int64{"http": 1 << 40}})
	sa := r.session(a)
	quiet := r.scrapeText()
	const names = 20_000
	for i := range names {
		r.must(&engine.Call{Session: sa}, func(c *engine.Call) error { return e.Consume(c, 0, fmt.Sprintf("r%05d", i), 1) })
	}
	r.must(&engine.Call{Session: sa}, func(c *engine.Call) error { return e.Consume(c, 0, "r19999", 99) })
	r.must(&engine.Call{Session: sa}, func(c *engine.Call) error { return e.Consume(c, 0, "http", 7) })
	for i := range 500 {
		r.must(&engine.Call{Session: sa}, func(c *engine.Call) error {
			_, _, err := e.Acquire(c, 0, fmt.Sprintf("c%03d", i), 0)
			return err
		})
	}
	r.await(float64(names+2), "governor_events_total", "kind=consumed")
	text := r.scrapeText()
	t.Logf("the scrape: %d bytes before, %d after", len(quiet), len(text))
	if len(text) > len(quiet)+20_000 {
		t.Fatalf("the scrape grew from %d to %d bytes", len(quiet), len(text))
	}
	fams := r.scrape()
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"governor_tenant_quota_used_total", []string{"resource=http", "tenant=a"}, 7},
		{"governor_tenant_quota_used_total", []string{"resource=r19999", "tenant=a"}, 100},
		{"governor_tenant_quota_used_total", []string{"resource=" + otherName, "tenant=a"}, names - namedSeries},
		{"governor_root_quota_used_total", []string{"resource=http"}, 7},
		{"governor_root_quota_used_total", []string{"resource=" + otherName}, names - namedSeries},
		{"governor_tenant_leases_held", []string{"class=" + otherName, "tenant=a"}, 500 - namedSeries},
	} {
		if got, ok := value(fams, tc.name, tc.labels...); !ok || got != tc.want {
			t.Errorf("%s %v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	for _, fam := range []string{"governor_tenant_quota_used_total", "governor_root_quota_used_total", "governor_tenant_leases_held"} {
		if n := len(fams[fam].GetMetric()); n > namedSeries+2 {
			t.Errorf("%s has %d series; want at most %d", fam, n, namedSeries+2)
		}
	}
	if strings.Contains(text, `resource="r10000"`) {
		t.Error("a name used once among 20,000 has a series of its own")
	}
}
