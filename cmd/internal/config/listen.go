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
	case overlap(c.MetricsListen, c.Listen):
		k.add("metrics_listen", "%q would take the same port as listen (%s): choose another port, or port 0 for any free one", c.MetricsListen, c.Listen)
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

// overlap reports whether two valid listen addresses would bind the same
// socket: the same fixed port on hosts that share an interface. Port 0
// never clashes (each gets a free port); a wildcard host ("", 0.0.0.0, ::)
// takes the port on every interface, so it clashes with any host; names
// other than localhost are compared as written.
func overlap(a, b string) bool {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	na, _ := strconv.ParseUint(pa, 10, 16)
	nb, _ := strconv.ParseUint(pb, 10, 16)
	if na == 0 || na != nb {
		return false
	}
	ha, hb = canonicalHost(ha), canonicalHost(hb)
	return ha == "" || hb == "" || ha == hb
}

// canonicalHost maps every spelling of "all interfaces" to "" and
// localhost to its IPv4 loopback address.
func canonicalHost(h string) string {
	if strings.EqualFold(h, "localhost") {
		return "127.0.0.1"
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return strings.ToLower(h)
	}
	if ip.IsUnspecified() {
		return ""
	}
	return ip.Unmap().String()
}
