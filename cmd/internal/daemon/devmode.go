package daemon

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
)

// Development mode's demo tenant may spend this much of devResource, so a
// newcomer sees what is left after each consume and, eventually, a denial.
const (
	devResource = "http"
	devBudget   = 1000
)

// The demo tenant's defaults for its new children: an agent-CLI run of the
// hook gets devRunToolCalls tool calls and devRunAgents subagents, each
// subagent devAgentToolCalls tool calls, so the hook refuses as the README
// shows without any further setup.
const (
	devRunToolCalls   = 500
	devRunAgents      = 10
	devAgentToolCalls = 100
)

// devConfig is the configuration governord runs with when it is given no
// file: config.Default (loopback only, the record in governor.db and one
// demo tenant, which the Gubernator-compatible API serves) in dir, with the
// keys kept in dir's keys file.
// GOVERNOR_DATABASE_URL, when set, chooses the record as it does for a file.
func devConfig(dir string) (*config.Config, DevKeys, error) {
	keys, err := devKeys(dir)
	if err != nil {
		return nil, keys, err
	}
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "governor.db")
	if url, ok := os.LookupEnv(config.DatabaseURLVariable); ok {
		cfg.DatabaseURL = url
	}
	cfg.AdminKey = keys.Admin
	demo := &cfg.Tenants[0]
	demo.APIKey = keys.Demo
	demo.Quotas = map[string]int64{devResource: devBudget}
	demo.Defaults = config.Defaults{
		Quotas:   map[string]int64{"tool_calls": devRunToolCalls, "agents": devRunAgents},
		Children: config.Caps{Quotas: map[string]int64{"tool_calls": devAgentToolCalls}},
	}
	cfg.Gubernator.Enabled, cfg.Gubernator.Tenant = true, config.DemoTenant
	return cfg, keys, nil
}

// printWelcome tells a newcomer where everything is and the exact commands
// to try it, with the demo tenant's cap as the record holds it.
func printWelcome(w io.Writer, cfg *config.Config, keys DevKeys, d *Daemon) {
	api, metrics := d.Addr(), d.MetricsAddr()
	kept := "reused from an earlier start"
	if keys.New {
		kept = "generated now, reused on the next start"
	}
	fmt.Fprintf(w, "governord is running in development mode: loopback only, plain text.\n\n")
	fmt.Fprintf(w, "  API              http://%s\n", api)
	if cfg.Dashboard {
		fmt.Fprintf(w, "  dashboard        http://%s/ui/ (sign in with a key below)\n", api)
	}
	if metrics != nil {
		fmt.Fprintf(w, "  metrics          http://%s/metrics\n", metrics)
	}
	fmt.Fprintf(w, "  record           %s\n", redactURL(cfg.DatabaseURL))
	fmt.Fprintf(w, "  keys file        %s (%s)\n", keys.Path, kept)
	fmt.Fprintf(w, "  admin key        %s\n", keys.Admin)
	fmt.Fprintf(w, "  demo tenant key  %s\n\n", keys.Demo)
	fmt.Fprintf(w, "%s Spend one over JSON:\n\n", d.demoBudget())
	fmt.Fprintf(w, "  curl -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{\"node_id\":0,\"resource\":%q,\"amount\":1}' http://%s/governor.v1.GovernorService/Consume\n\n",
		keys.Demo, devResource, api)
	fmt.Fprintf(w, "The same over gRPC:\n\n")
	fmt.Fprintf(w, "  grpcurl -plaintext -H 'Authorization: Bearer %s' -d '{\"resource\":%q,\"amount\":1}' %s governor.v1.GovernorService/Consume\n\n",
		keys.Demo, devResource, api)
	fmt.Fprintf(w, "Clients read the keys from the environment: . ./%s\n", KeysFile)
	fmt.Fprintf(w, "In production, write a configuration (governor.example.yaml shows every key) and run: governord -config FILE\n")
}

// demoBudget says what the record holds for the demo tenant's devResource:
// its cap and what is left, which differ from the file's after a change at
// run time or earlier consumes.
func (d *Daemon) demoBudget() string {
	id, ok := d.tenants[config.DemoTenant]
	if !ok {
		return "There is no demo tenant."
	}
	inf, _, _, err := d.store.Engine.Describe(&engine.Call{}, id, nil)
	if err != nil {
		return fmt.Sprintf("The demo tenant cannot be read: %v.", err)
	}
	q := inf.Quotas[devResource]
	if !q.Capped {
		return fmt.Sprintf("The demo tenant has no cap on %q.", devResource)
	}
	return fmt.Sprintf("The demo tenant may spend %d units of %q; %d are left.", q.Cap, devResource, max(q.Cap-q.Used, 0))
}
