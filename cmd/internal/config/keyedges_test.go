package config

import (
	"strings"
	"testing"
)

// TestAdminKeyMatchesOnlyItself: the admin key with anything added, or
// cut short, matches neither the admin nor a tenant.
func TestAdminKeyMatchesOnlyItself(t *testing.T) {
	const admin = "admin-key-0123456789"
	c := &Config{AdminKey: admin, Tenants: []Tenant{{Name: "a", APIKey: keyA}}}
	if _, isAdmin, ok := c.MatchKey(admin); !isAdmin || !ok {
		t.Fatal("the admin key itself does not match")
	}
	for _, presented := range []string{admin + "x", admin + " ", admin + keyA, admin[:len(admin)-1], "x" + admin} {
		if tenant, isAdmin, ok := c.MatchKey(presented); ok || isAdmin || tenant != "" {
			t.Errorf("MatchKey(%q) = %q, %v, %v; want no match", presented, tenant, isAdmin, ok)
		}
	}
}

// TestKeyLengthBoundary: a plain-text key of 15 characters is refused with
// the rule in words; one of 16 is accepted, as admin key and as tenant key.
func TestKeyLengthBoundary(t *testing.T) {
	k15, k16 := strings.Repeat("k", 15), strings.Repeat("t", 16)
	for _, yaml := range []string{"admin_key: " + k15 + "\n", "tenants:\n  - {name: a, api_key: " + k15 + "}\n"} {
		_, err := Parse([]byte(yaml), "g.yaml", env(nil))
		if err == nil || !strings.Contains(err.Error(), "must be at least 16 characters") || !strings.Contains(err.Error(), "got 15 characters") {
			t.Errorf("a 15-character key in %q: %v, want it refused", yaml, err)
		}
	}
	c, err := Parse([]byte("admin_key: "+k16+"\ntenants:\n  - {name: a, api_key: "+strings.Repeat("u", 16)+"}\n"), "g.yaml", env(nil))
	if err != nil {
		t.Fatalf("16-character keys refused: %v", err)
	}
	if _, admin, ok := c.MatchKey(k16); !admin || !ok {
		t.Fatal("the 16-character admin key does not match")
	}
	if tenant, _, ok := c.MatchKey(strings.Repeat("u", 16)); tenant != "a" || !ok {
		t.Fatal("the 16-character tenant key does not match")
	}
}
