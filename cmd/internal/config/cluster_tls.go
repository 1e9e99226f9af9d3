package config

// ClusterTLS secures the traffic between members. It is on when the API
// uses TLS (tls.cert_file and tls.key_file): each member then presents
// the API's certificate to the others, in both directions, and accepts a
// peer only if its certificate is signed by CAFile. A member that speaks
// plain text to a member with TLS is refused.
type ClusterTLS struct {
	// CAFile holds the PEM certificates that sign the members'
	// certificates. Required when the API uses TLS.
	CAFile string `yaml:"ca_file"`
}

// checkClusterTLS: a member whose API uses TLS names the CA of its peers,
// and one whose API is plain text names none.
func (c *Config) checkClusterTLS(k *checker) {
	ca := c.Cluster.TLS.CAFile
	switch {
	case c.TLS.Enabled() && ca == "":
		k.add("cluster.tls.ca_file", "required when the API uses TLS (tls.cert_file): the PEM certificates that sign the members' certificates, since members talk over TLS as the API does")
	case !c.TLS.Enabled() && ca != "":
		k.add("cluster.tls.ca_file", "members talk over TLS only when the API does: set tls.cert_file and tls.key_file, or remove cluster.tls.ca_file")
	}
}
