package config

import "testing"

func TestDashboardKey(t *testing.T) {
	for doc, want := range map[string]bool{"": true, "dashboard: true\n": true, "dashboard: false\n": false} {
		c, err := Parse([]byte(doc), "g.yaml", env(nil))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if c.Dashboard != want {
			t.Errorf("%q: dashboard %v, want %v", doc, c.Dashboard, want)
		}
	}
	if _, err := Parse([]byte("dashboard: sometimes\n"), "g.yaml", env(nil)); err == nil {
		t.Error("dashboard: sometimes was accepted")
	}
}
