package config

import (
	"strings"
	"testing"
)

// TestKeyMatcherKeepsTheKeysItWasMadeWith: a matcher answers for the keys
// configured when it was made, so a server's matcher is not changed by
// later edits of the Config value it came from.
func TestKeyMatcherKeepsTheKeysItWasMadeWith(t *testing.T) {
	const admin = "admin-key-0123456789"
	c := &Config{AdminKey: admin, Tenants: []Tenant{{Name: "a", APIKey: keyA}}}
	match := c.KeyMatcher()
	c.AdminKey, c.Tenants = "", nil
	if _, isAdmin, ok := match(admin); !isAdmin || !ok {
		t.Error("the admin key no longer matches")
	}
	if tenant, _, ok := match(keyA); tenant != "a" || !ok {
		t.Errorf("tenant a's key matches %q, %v; want a", tenant, ok)
	}
}

// BenchmarkKeyMatcher is BenchmarkMatchKey's check with a KeyMatcher,
// which works out the configured keys' digests once instead of on every
// call.
//
//	go test -run '^$' -bench 'MatchKey|KeyMatcher' -benchmem ./cmd/internal/config
func BenchmarkKeyMatcher(b *testing.B) {
	c := &Config{AdminKey: "admin-key-0123456789"}
	for i := range 10 {
		c.Tenants = append(c.Tenants, Tenant{Name: "t", APIKey: hashOf(keyA + strings.Repeat("x", i))})
	}
	match := c.KeyMatcher()
	b.ReportAllocs()
	for b.Loop() {
		if tenant, _, ok := match(keyA + "xxxxxxxxx"); tenant != "t" || !ok {
			b.Fatalf("matched %q, %v", tenant, ok)
		}
	}
}
