package config

import (
	"errors"
	"testing"
	"time"
)

// TestGubernatorMistakes checks every message the gubernator section can
// produce, whole.
func TestGubernatorMistakes(t *testing.T) {
	tenantA := "tenants:\n  - {name: a, api_key: " + keyA + "}\n  - {name: b, api_key: " + keyB + "}\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"enabled without tenants", "gubernator:\n  enabled: true\n",
			"g.yaml:1: gubernator.tenant: the rate limits are kept under a tenant, and no tenant is configured: add one under tenants, or set enabled: false"},
		{"enabled without a tenant", tenantA + "gubernator:\n  enabled: true\n",
			`g.yaml:4: gubernator.tenant: required when enabled: the name of the tenant the rate limits are kept under; one of "a", "b"`},
		{"unknown tenant", tenantA + "gubernator:\n  enabled: true\n  tenant: c\n",
			`g.yaml:6: gubernator.tenant: must name a configured tenant, one of "a", "b"; got "c"`},
		{"bad resource", "gubernator:\n  resource: Rate Limits\n",
			"g.yaml:2: gubernator.resource: not a valid resource name: use 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter"},
		{"unknown key", "gubernator:\n  tenants: a\n",
			"g.yaml:2: gubernator.tenants: unknown key; allowed here: enabled, tenant, resource, idle_ttl"},
		{"negative idle_ttl", "gubernator:\n  idle_ttl: -1s\n",
			"g.yaml:2: gubernator.idle_ttl: must be between 0 (keep every key) and 8784h0m0s, got -1s"},
		{"idle_ttl too long", "gubernator:\n  idle_ttl: 9000h\n",
			"g.yaml:2: gubernator.idle_ttl: must be between 0 (keep every key) and 8784h0m0s, got 9000h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "g.yaml", env(nil))
			var cfgErr *Error
			if !errors.As(err, &cfgErr) || c != nil {
				t.Fatalf("got %+v, %v; want no config and a *Error", c, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestGubernatorSection checks the defaults and a valid section.
func TestGubernatorSection(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       Gubernator
	}{
		{"left out: off, default resource and idle time", "",
			Gubernator{Resource: DefaultGubernatorResource, IdleTTL: time.Hour}},
		{"disabled may leave the tenant out", "gubernator: {enabled: false}\n",
			Gubernator{Resource: DefaultGubernatorResource, IdleTTL: time.Hour}},
		{"enabled on a tenant", "tenants:\n  - {name: a, api_key: " + keyA + "}\ngubernator: {enabled: true, tenant: a, resource: api-calls, idle_ttl: 10m}\n",
			Gubernator{Enabled: true, Tenant: "a", Resource: "api-calls", IdleTTL: 10 * time.Minute}},
		{"idle_ttl 0 keeps every key", "gubernator: {idle_ttl: 0s}\n",
			Gubernator{Resource: DefaultGubernatorResource}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "g.yaml", env(nil))
			if err != nil {
				t.Fatal(err)
			}
			if c.Gubernator != tt.want {
				t.Errorf("got %+v, want %+v", c.Gubernator, tt.want)
			}
		})
	}
}
