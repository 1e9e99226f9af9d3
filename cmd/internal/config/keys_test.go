package config

import (
	"strings"
	"testing"
)

func TestMatchKey(t *testing.T) {
	c := &Config{
		AdminKey: "admin-key-0123456789",
		Tenants: []Tenant{
			{Name: "plain", APIKey: keyA},
			{Name: "hashed", APIKey: hashOf(keyB)},
			{Name: "upper", APIKey: KeyHashPrefix + strings.ToUpper(hashOf("upper-key-0123456789")[len(KeyHashPrefix):])},
			{Name: "broken", APIKey: "sha256:zz"},
		},
	}
	tests := []struct {
		presented string
		tenant    string
		admin, ok bool
	}{
		{"admin-key-0123456789", "", true, true},
		{keyA, "plain", false, true},
		{keyB, "hashed", false, true},
		{"upper-key-0123456789", "upper", false, true},
		{hashOf(keyB), "", false, false},
		{keyA + "x", "", false, false},
		{keyA[:len(keyA)-1], "", false, false},
		{"sha256:zz", "", false, false},
		{"", "", false, false},
	}
	for _, tt := range tests {
		tenant, admin, ok := c.MatchKey(tt.presented)
		if tenant != tt.tenant || admin != tt.admin || ok != tt.ok {
			t.Errorf("MatchKey(%q) = %q, %v, %v; want %q, %v, %v", tt.presented, tenant, admin, ok, tt.tenant, tt.admin, tt.ok)
		}
	}
}

func TestMatchKeyWithoutAdmin(t *testing.T) {
	c := &Config{Tenants: []Tenant{{Name: "a", APIKey: keyA}}}
	if _, admin, ok := c.MatchKey(keyA); admin || !ok {
		t.Fatalf("tenant key: admin %v ok %v", admin, ok)
	}
	if _, _, ok := c.MatchKey("admin-key-0123456789"); ok {
		t.Fatal("an unconfigured admin key matched")
	}
}

func BenchmarkMatchKey(b *testing.B) {
	c := &Config{AdminKey: "admin-key-0123456789"}
	for i := range 10 {
		c.Tenants = append(c.Tenants, Tenant{Name: "t", APIKey: hashOf(keyA + strings.Repeat("x", i))})
	}
	for b.Loop() {
		c.MatchKey(keyA + "xxxxxxxxx")
	}
}

func TestRequiresTLS(t *testing.T) {
	tests := []struct {
		listen string
		want   bool
	}{
		{"127.0.0.1:7600", false},
		{"127.1.2.3:7600", false},
		{"[::1]:7600", false},
		{"localhost:7600", false},
		{"LOCALHOST:7600", false},
		{"[::ffff:127.0.0.1]:7600", false},
		{"0.0.0.0:7600", true},
		{":7600", true},
		{"[::]:7600", true},
		{"10.0.0.5:7600", true},
		{"governor.internal:7600", true},
		{"128.0.0.1:7600", true},
		{"127.0.0.1", true},
		{"", true},
	}
	for _, tt := range tests {
		if got := RequiresTLS(tt.listen); got != tt.want {
			t.Errorf("RequiresTLS(%q) = %v, want %v", tt.listen, got, tt.want)
		}
	}
}
