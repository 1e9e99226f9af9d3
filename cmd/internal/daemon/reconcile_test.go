package daemon

import (
	"context"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
)

// seedConfig is a configuration with shared pools, two tenants (one with
// defaults) and an adaptive class.
func seedConfig() *config.Config {
	cfg := config.Default()
	cfg.Root = config.Caps{Quotas: map[string]int64{"http": 1000}, Limits: map[string]int64{"db": 8, "agents": 4}}
	cfg.Adaptive = map[string]config.Adaptive{"db": {Initial: 3, Min: 1, Max: 10, Interval: 1, MinSamples: 1}}
	cfg.Tenants = []config.Tenant{
		{Name: "team-a", Weight: 3, Quotas: map[string]int64{"http": 500}, Limits: map[string]int64{"agents": 2},
			Defaults: config.Defaults{Quotas: map[string]int64{"http": 50},
				Children: config.Caps{Quotas: map[string]int64{"http": 5}}}},
		{Name: "team-b", Weight: 1, Quotas: map[string]int64{"http": 200}},
	}
	return cfg
}

func openRecord(t *testing.T, url string) *durable.Store {
	t.Helper()
	st, err := durable.Open(context.Background(), durable.Options{URL: url, Clock: wallClock{}, Logger: quietLog()})
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return st
}

func seed(t *testing.T, st *durable.Store, cfg *config.Config) map[string]engine.ID {
	t.Helper()
	ids, err := reconcile(context.Background(), st, cfg, quietLog())
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return ids
}

func describe(t *testing.T, st *durable.Store, id engine.ID) engine.NodeInfo {
	t.Helper()
	inf, _, _, err := st.Engine.Describe(&engine.Call{}, id, nil)
	if err != nil {
		t.Fatalf("describe %d: %v", id, err)
	}
	return inf
}

// capsOf returns a node's quotas and limits that are set, as plain maps.
func capsOf(inf engine.NodeInfo) (quotas, limits map[string]int64) {
	quotas, limits = map[string]int64{}, map[string]int64{}
	for r, q := range inf.Quotas {
		if q.Capped {
			quotas[r] = q.Cap
		}
	}
	for c, l := range inf.Limits {
		if l.Limited {
			limits[c] = l.Limit
		}
	}
	return quotas, limits
}

func wantCaps(t *testing.T, what string, inf engine.NodeInfo, quotas, limits map[string]int64) {
	t.Helper()
	gotQ, gotL := capsOf(inf)
	if !maps.Equal(gotQ, quotas) || !maps.Equal(gotL, limits) {
		t.Errorf("%s: quotas %v limits %v, want quotas %v limits %v", what, gotQ, gotL, quotas, limits)
	}
}

func TestReconcileSeedsAFreshRecordFromTheFile(t *testing.T) {
	st := openRecord(t, "")
	defer st.Close(context.Background())
	cfg := seedConfig()
	ids := seed(t, st, cfg)
	// The adaptive class's root limit is left to its controller.
	wantCaps(t, "root", describe(t, st, engine.RootID), map[string]int64{"http": 1000}, map[string]int64{"agents": 4})
	a := describe(t, st, ids["team-a"])
	wantCaps(t, "team-a", a, map[string]int64{"http": 500}, map[string]int64{"agents": 2})
	if a.Weight != 3 || a.Parent != engine.RootID || a.Name != "team-a" {
		t.Errorf("team-a: weight %d parent %d name %q", a.Weight, a.Parent, a.Name)
	}
	if a.Defaults.Quotas["http"] != 50 || a.Defaults.Children == nil || a.Defaults.Children.Quotas["http"] != 5 {
		t.Errorf("team-a defaults %+v, want http 50 and children http 5", a.Defaults)
	}
	b := describe(t, st, ids["team-b"])
	wantCaps(t, "team-b", b, map[string]int64{"http": 200}, map[string]int64{})
	if b.Defaults.Quotas != nil || b.Defaults.Children != nil {
		t.Errorf("team-b has defaults %+v; the file gives none", b.Defaults)
	}
}

func TestTheRecordDecidesOnceTheFileHasSeeded(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
	ctx := context.Background()
	st := openRecord(t, url)
	ids := seed(t, st, seedConfig())
	// Changes at run time: a tenant's cap, a root pool, a tenant's defaults,
	// a limit learned by a controller, a root cap removed.
	e, c := st.Engine, &engine.Call{}
	v := func(n int64) *int64 { return &n }
	must(t, e.SetQuota(c, ids["team-a"], "http", v(77)))
	must(t, e.SetLimit(c, engine.RootID, "agents", v(9)))
	must(t, e.SetDefaults(c, ids["team-b"], engine.Defaults{Caps: engine.Caps{Quotas: map[string]int64{"http": 7}}}))
	must(t, e.AdjustLimit(c, engine.RootID, "db", nil, 6, engine.Adapt{Samples: 10, Reason: "healthy"}))
	must(t, st.Wait(ctx, c.Seq))
	must(t, st.Close(ctx))

	// The same file, and then a file that changed: a cap's value, a new cap,
	// a new tenant, new defaults for a tenant that has some on record.
	changed := seedConfig()
	changed.Tenants[0].Quotas = map[string]int64{"http": 900, "tool_calls": 40}
	changed.Tenants[0].Weight = 9
	changed.Tenants[1].Defaults = config.Defaults{Quotas: map[string]int64{"http": 99}}
	changed.Tenants = append(changed.Tenants, config.Tenant{Name: "team-c", Weight: 2, Quotas: map[string]int64{"http": 10}})
	for _, tc := range []struct {
		name string
		cfg  *config.Config
	}{{"same file", seedConfig()}, {"changed file", changed}} {
		t.Run(tc.name, func(t *testing.T) {
			st := openRecord(t, url)
			defer st.Close(ctx)
			again := seed(t, st, tc.cfg)
			if again["team-a"] != ids["team-a"] || again["team-b"] != ids["team-b"] {
				t.Fatalf("restart found tenants %v, want the same nodes as %v", again, ids)
			}
			root := describe(t, st, engine.RootID)
			wantCaps(t, "root", root, map[string]int64{"http": 1000}, map[string]int64{"agents": 9, "db": 6})
			a := describe(t, st, ids["team-a"])
			wantQuotas := map[string]int64{"http": 77}
			if tc.cfg == changed {
				wantQuotas["tool_calls"] = 40 // a cap the record lacked is seeded
			}
			wantCaps(t, "team-a", a, wantQuotas, map[string]int64{"agents": 2})
			if a.Weight != 3 {
				t.Errorf("team-a weight %d, want 3 as created", a.Weight)
			}
			if b := describe(t, st, ids["team-b"]); b.Defaults.Quotas["http"] != 7 {
				t.Errorf("team-b defaults %+v, want those set at run time (http 7)", b.Defaults)
			}
			if id, ok := again["team-c"]; tc.cfg == changed && (!ok || describe(t, st, id).Quotas["http"].Cap != 10) {
				t.Errorf("the new tenant team-c was not created with its cap: %v", again)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRateCapsAreSeededOnceAndTheRecordDecides: the file's rate caps and
// calendar windows seed the root, a tenant and its defaults; a rate changed
// at run time (and a bucket's state) survive a restart with a file that
// says otherwise, and a rate the record lacks is seeded.
func TestRateCapsAreSeededOnceAndTheRecordDecides(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
	ctx := context.Background()
	perSecond := config.Rate{Limit: 100, Per: time.Second, Algorithm: "leaky_bucket", Burst: 20}
	daily := config.Rate{Limit: 500, Calendar: "day", Zone: "Europe/Paris"}
	cfg := seedConfig()
	cfg.Root.Rates = map[string]config.Rate{"http": perSecond}
	cfg.Tenants[0].Rates = map[string]config.Rate{"tool_calls": daily}
	cfg.Tenants[0].Defaults.Rates = map[string]config.Rate{"http": {Limit: 10, Per: time.Minute}}
	st := openRecord(t, url)
	ids := seed(t, st, cfg)
	a := describe(t, st, ids["team-a"])
	want := engine.Rate{Limit: 500, Calendar: engine.Day, Zone: "Europe/Paris"}
	if a.Rates["tool_calls"].Rate != want || a.Defaults.Rates["http"] != (engine.Rate{Limit: 10, Period: time.Minute}) {
		t.Fatalf("team-a: rates %+v defaults %+v", a.Rates, a.Defaults)
	}
	if r := describe(t, st, engine.RootID).Rates["http"].Rate; r != (engine.Rate{Limit: 100, Period: time.Second, Burst: 20, Algorithm: engine.LeakyBucket}) {
		t.Fatalf("root rate %+v", r)
	}
	e, c := st.Engine, &engine.Call{}
	must(t, e.SetRate(c, ids["team-a"], "tool_calls", &engine.Rate{Limit: 50, Period: time.Hour}))
	must(t, e.Consume(c, ids["team-a"], "tool_calls", 20))
	must(t, st.Wait(ctx, c.Seq))
	must(t, st.Close(ctx))

	cfg.Tenants[1].Rates = map[string]config.Rate{"http": perSecond}
	st = openRecord(t, url)
	defer st.Close(ctx)
	seed(t, st, cfg)
	if r := describe(t, st, ids["team-a"]).Rates["tool_calls"]; r.Limit != 50 || r.Remaining != 30 {
		t.Fatalf("team-a after restart: %+v, want the run-time rate with 30 left", r)
	}
	if _, ok := describe(t, st, ids["team-b"]).Rates["http"]; !ok {
		t.Fatal("a rate the record lacked was not seeded")
	}
}
