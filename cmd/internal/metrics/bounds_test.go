package metrics

import (
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// TestScrapeShowsBounds: each tenant has a series per bound of what it
// holds, its limit and the calls refused, and a refusal shows at once.
func TestScrapeShowsBounds(t *testing.T) {
	r := newRig(t)
	e := r.store.Engine
	a := r.tenant("a", engine.Caps{})
	b := r.tenant("b", engine.Caps{})
	tight := engine.DefaultBounds()
	tight[engine.BoundNodes] = 1
	if err := e.SetBounds(engine.BoundsConfig{Default: engine.DefaultBounds(), PerTenant: map[engine.ID]engine.Bounds{a: tight}}); err != nil {
		t.Fatal(err)
	}
	sa, _ := r.session(a), r.session(b)
	r.must(&engine.Call{Session: sa}, func(c *engine.Call) error {
		_, err := e.Create(c, 0, engine.Spec{Name: "task-1", Quotas: map[string]int64{"http": 5}})
		return err
	})
	if _, err := e.Create(&engine.Call{Session: sa}, 0, engine.Spec{Name: "task-2"}); err == nil {
		t.Fatal("a second node was created past a bound of 1")
	}
	fams := r.scrape()
	for _, tt := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"governor_tenant_bound_held", []string{"bound=nodes", "tenant=a"}, 1},
		{"governor_tenant_bound_held", []string{"bound=names", "tenant=a"}, 1},
		{"governor_tenant_bound_held", []string{"bound=sessions", "tenant=a"}, 1},
		{"governor_tenant_bound_held", []string{"bound=nodes", "tenant=b"}, 0},
		{"governor_tenant_bound_limit", []string{"bound=nodes", "tenant=a"}, 1},
		{"governor_tenant_bound_limit", []string{"bound=nodes", "tenant=b"}, 1_000_000},
		{"governor_tenant_bound_limit", []string{"bound=watch_streams", "tenant=b"}, 100},
		{"governor_tenant_bound_refusals_total", []string{"bound=nodes", "tenant=a"}, 1},
		{"governor_tenant_bound_refusals_total", []string{"bound=nodes", "tenant=b"}, 0},
	} {
		if got, ok := value(fams, tt.name, tt.labels...); !ok || got != tt.want {
			t.Errorf("%s%v = %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	if n := len(fams["governor_tenant_bound_held"].GetMetric()); n != 2*int(engine.NumBounds) {
		t.Errorf("%d series of bounds held for 2 tenants, want %d", n, 2*engine.NumBounds)
	}
}
