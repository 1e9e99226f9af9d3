package config

import (
	"errors"
	"strings"
	"testing"
)

// A member whose API uses TLS names the CA of its peers; one whose API is
// plain text names none; with both, the section parses.
func TestClusterTLS(t *testing.T) {
	const apiTLS = "tls: {cert_file: /c.pem, key_file: /k.pem}\n"
	const ca = "  tls: {ca_file: /ca.pem}\n"
	c, err := Parse([]byte("metrics_listen: off\n"+apiTLS+member("/d")+ca), "g.yaml", env(nil))
	if err != nil || c.Cluster.TLS.CAFile != "/ca.pem" {
		t.Fatalf("with the API's TLS and a CA: %+v, %v", c.Cluster.TLS, err)
	}
	for name, tt := range map[string]struct{ yaml, want string }{
		"TLS without a CA": {apiTLS + member("/d"),
			"cluster.tls.ca_file: required when the API uses TLS (tls.cert_file): the PEM certificates that sign the members' certificates"},
		"a CA without TLS": {member("/d") + ca,
			"cluster.tls.ca_file: members talk over TLS only when the API does: set tls.cert_file and tls.key_file, or remove cluster.tls.ca_file"},
	} {
		_, err := Parse([]byte(tt.yaml), "g.yaml", env(nil))
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want a config error containing %q", name, err, tt.want)
		}
	}
}
