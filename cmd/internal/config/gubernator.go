package config

import (
	"slices"
	"time"
)

// DefaultGubernatorResource is the resource Gubernator-compatible rate
// limits are kept on when the file names none.
const DefaultGubernatorResource = "gubernator"

// DefaultGubernatorIdleTTL is how long a key stays idle before it is
// forgotten when the file does not say.
const DefaultGubernatorIdleTTL = time.Hour

// maxIdleTTL is the longest idle_ttl the file may set.
const maxIdleTTL = 366 * 24 * time.Hour

// Gubernator configures the Gubernator-compatible API that governord serves
// on its API port beside its own: gRPC service pb.gubernator.V1 and the HTTP
// JSON paths /v1/GetRateLimits and /v1/HealthCheck.
type Gubernator struct {
	// Enabled serves the API. Default: false; development mode turns it on
	// for its demo tenant.
	Enabled bool `yaml:"enabled"`
	// Tenant is the configured tenant the rate limits are kept under: each
	// name is a node beneath the tenant, each unique_key a node beneath its
	// name, holding a rate cap on Resource. The tenant's key and the admin
	// key may call the API. Required when Enabled.
	Tenant string `yaml:"tenant"`
	// Resource is the resource the rate caps are on, so that caps on it
	// higher up (on the tenant, on the root) bound all the keys together.
	Resource string `yaml:"resource"`
	// IdleTTL is how long a key stays in the tree once it holds only what a
	// new key would (its bucket full, nothing booked, no cap of an admin's)
	// before it is forgotten; forgetting changes no answer. 0 keeps every
	// key. Default: 1h.
	IdleTTL time.Duration `yaml:"idle_ttl"`
}

// checkGubernator checks the Gubernator-compatible API's section.
func (c *Config) checkGubernator(k *checker) {
	g := c.Gubernator
	checkName(k, "gubernator.resource", g.Resource, "resource")
	if g.IdleTTL < 0 || g.IdleTTL > maxIdleTTL {
		k.add("gubernator.idle_ttl", "must be between 0 (keep every key) and %s, got %s", maxIdleTTL, g.IdleTTL)
	}
	if !g.Enabled {
		return
	}
	names := make([]string, len(c.Tenants))
	for i, t := range c.Tenants {
		names[i] = t.Name
	}
	switch {
	case len(names) == 0:
		k.add("gubernator.tenant", "the rate limits are kept under a tenant, and no tenant is configured: add one under tenants, or set enabled: false")
	case g.Tenant == "":
		k.add("gubernator.tenant", "required when enabled: the name of the tenant the rate limits are kept under; one of %s", quoted(names))
	case !slices.Contains(names, g.Tenant):
		k.add("gubernator.tenant", "must name a configured tenant, one of %s; got %q", quoted(names), g.Tenant)
	}
}

// quoted lists names as "a", "b", "c".
func quoted(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += `"` + n + `"`
	}
	return s
}
