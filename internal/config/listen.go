package config

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// RequiresTLS reports whether serving on listen without TLS would expose
// keys beyond this machine: false only for loopback addresses (127.0.0.0/8,
// ::1 and localhost). An address it cannot parse, or one with no host,
// which listens on every interface, requires TLS.
func RequiresTLS(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || host == "" {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return true
	}
	return !ip.IsLoopback()
}

// checkListeners checks both addresses, the certificate pair and the rule
// that a non-loopback API needs TLS or an explicit allow_plaintext.
func (c *Config) checkListeners(k *checker) {
	if !validAddress(c.Listen) {
		k.add("listen", "must be host:port with a port from 0 to 65535, such as %s; got %q", DefaultListen, c.Listen)
	} else if RequiresTLS(c.Listen) && !c.TLS.Enabled() && !c.AllowPlaintext {
		k.add("listen", "%q is not a loopback address, so keys would cross the network in clear: set tls.cert_file and tls.key_file, or allow_plaintext: true", c.Listen)
	}
	switch {
	case c.MetricsListen == "":
	case !validAddress(c.MetricsListen):
		k.add("metrics_listen", `must be host:port, such as %s, or "" or "off" to disable metrics; got %q`, DefaultMetricsListen, c.MetricsListen)
	case c.MetricsListen == c.Listen:
		k.add("metrics_listen", "must differ from listen (%s)", c.Listen)
	}
	if c.TLS.CertFile == "" && c.TLS.KeyFile != "" {
		k.add("tls.cert_file", "required when tls.key_file is set: give both or neither")
	}
	if c.TLS.KeyFile == "" && c.TLS.CertFile != "" {
		k.add("tls.key_file", "required when tls.cert_file is set: give both or neither")
	}
}

// validAddress reports whether addr is host:port with a numeric port.
func validAddress(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n <= 65535
}
