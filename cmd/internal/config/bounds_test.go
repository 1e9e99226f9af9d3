package config

import (
	"reflect"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// TestEngineBounds: the top-level block (each key left out at its default)
// is every tenant's, a tenant's block overrides it key by key, and every name
// the file gives a cap, a default, an adaptive controller or the
// Gubernator-compatible API is declared.
func TestEngineBounds(t *testing.T) {
	cfg, err := Parse([]byte(`
bounds: {sessions: 7}
root:
  quotas: {tokens: 100}
adaptive:
  db: {max: 5}
tenants:
  - name: a
    api_key: `+keyA+`
    limits: {agents: 2}
    defaults: {rates: {calls: {limit: 1, per: 1s}}, children: {quotas: {steps: 3}}}
    bounds: {nodes: 50, watch_streams: 2}
  - name: b
    api_key: `+keyB+`
`), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.EngineBounds(map[string]engine.ID{"a": 2, "b": 3})
	def := engine.DefaultBounds()
	def[engine.BoundSessions] = 7
	a := def
	a[engine.BoundNodes], a[engine.BoundWatches] = 50, 2
	want := engine.BoundsConfig{
		Default:   def,
		PerTenant: map[engine.ID]engine.Bounds{2: a},
		Declared:  []string{"agents", "calls", "db", "gubernator", "steps", "tokens"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	e := engine.New(engine.Options{})
	if err := e.SetBounds(got); err != nil {
		t.Fatalf("the engine refuses the file's bounds: %v", err)
	}
}
