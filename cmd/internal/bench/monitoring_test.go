package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestDashboardQueriesNameServedMetrics reads every query of the Grafana
// dashboard in deploy/monitoring and checks that each metric it names is
// served by a governord with a tenant, a pool, a lease and a refusal, so
// that the dashboard cannot name a metric that does not exist.
func TestDashboardQueriesNameServedMetrics(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/monitoring/grafana/governor-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	served := servedMetrics(t)
	name := regexp.MustCompile(`governor_[a-z_]+`)
	check := func(where, expr string) {
		names := name.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("%s: %q names no governor metric", where, expr)
		}
		for _, m := range names {
			if !served[m] {
				t.Errorf("%s: %q names %s, which governord does not serve", where, expr, m)
			}
		}
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			check("panel "+p.Title, q.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		check("variable", v.Definition)
	}
}

// servedMetrics starts governord, makes every kind of series exist, and
// returns the metric names its endpoint serves.
func servedMetrics(t *testing.T) map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg, err := startInProcess(ctx, settings{rootLimits: map[string]int64{"db": 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.close()
	s, err := tg.session(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tenant, err := s.node(ctx, 1, &governorv1.NodeSpec{Name: "team", Quotas: map[string]int64{"http": 1}, Limits: map[string]int64{"db": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.acquire(ctx, tenant, "db"); err != nil {
		t.Fatal(err)
	}
	if err := s.consume(ctx, tenant, "http", 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.consume(ctx, tenant, "http", 1, ""); !refused(err) {
		t.Fatalf("the second consume of a budget of 1: %v", err)
	}
	resp, err := http.Get(tg.metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
	}
	return out
}
