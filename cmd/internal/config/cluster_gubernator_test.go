package config

import "testing"

// A cluster member may serve the Gubernator-compatible API.
func TestClusterServesGubernator(t *testing.T) {
	yaml := "metrics_listen: off\ngubernator: {enabled: true, tenant: a}\ntenants: [{name: a, api_key: key-a-0123456789ab}]\n" + member("/d")
	c, err := Parse([]byte(yaml), "g.yaml", env(nil))
	if err != nil || !c.Gubernator.Enabled || !c.Cluster.Enabled() {
		t.Fatalf("a member with the Gubernator API: %+v, %v", c.Gubernator, err)
	}
}
