package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"governor.dev/governor/cmd/internal/config"
)

// TestBoundsFromTheFile: a tenant's bound from the file refuses the call
// past it with ResourceExhausted naming the bound, its figure and its
// limit, records nothing, and leaves the other tenant alone; a restart with
// the same file counts the same from the record and still refuses; a
// restart with the bound raised in the file admits.
func TestBoundsFromTheFile(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
	ctx := context.Background()
	const teamBKey = "team-b-key-0123456789"
	cfg := testConfig(url)
	cfg.Tenants[0].Bounds = config.Bounds{Nodes: 2}
	cfg.Tenants = append(cfg.Tenants, config.Tenant{Name: "team-b", APIKey: teamBKey, Weight: 1})
	ensure := func(d *Daemon, key string, names ...string) error {
		api := newJSONAPI(d.URL())
		tok, err := api.session(ctx, key)
		must(t, err)
		for _, name := range names {
			if _, err := api.ensure(ctx, tok, name); err != nil {
				return err
			}
		}
		return nil
	}
	refused := func(err error) {
		t.Helper()
		var ce *callError
		if !errors.As(err, &ce) || ce.Code != "resource_exhausted" ||
			!strings.Contains(ce.Message, `Tenant "team-a" would pass its bound on nodes: it holds 2, the call would add 1, and the bound is 2`) ||
			!strings.Contains(ce.Message, "bounds.nodes") {
			t.Fatalf("got %v, want ResourceExhausted naming bounds.nodes, 2 held and a bound of 2", err)
		}
	}

	d := startDaemon(t, cfg, Options{})
	must(t, ensure(d, testTeamKey, "t1", "t2"))
	seq := d.store.Engine.Seq()
	refused(ensure(d, testTeamKey, "t3"))
	if got := d.store.Engine.Seq(); got != seq+1 { // the session the call opened, nothing more
		t.Fatalf("the refused call left the record at %d, want %d", got, seq+1)
	}
	must(t, ensure(d, teamBKey, "t1", "t2", "t3"))
	must(t, d.Stop(ctx))

	d = startDaemon(t, cfg, Options{})
	refused(ensure(d, testTeamKey, "t3"))
	must(t, d.Stop(ctx))

	cfg.Tenants[0].Bounds.Nodes = 3
	d = startDaemon(t, cfg, Options{})
	must(t, ensure(d, testTeamKey, "t3"))
}
