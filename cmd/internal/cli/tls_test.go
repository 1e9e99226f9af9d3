package cli_test

import (
	"testing"

	"governor.dev/governor/internal/clientconn"
	"governor.dev/governor/internal/testcert"
)

func TestHookAndVerbsOverTLS(t *testing.T) {
	t.Parallel()
	cfg := testConfig("")
	certFile, keyFile := testcert.New(t, 1).Write(t, t.TempDir())
	cfg.TLS.CertFile, cfg.TLS.KeyFile = certFile, keyFile
	d := startGovernord(t, cfg)
	pre := payload(t, "claude/pre_tool_use.json", "tls", "t1", "")

	// Trusting the certificate through the environment or the flag works.
	r := governor(t, append(envFor(d, teamAKey), clientconn.EnvCAFile+"="+certFile), pre, hookArgs("claude", t.TempDir())...)
	mustContain(t, r, 0)
	mustContain(t, governor(t, envFor(d, teamAKey), nil, "describe", "--ca-file", certFile), 0, "claude:tls #", "tool_calls 1/3")

	// Plain text to a TLS server, or TLS without trusting its certificate,
	// refuses the tool.
	r = governor(t, envFor(d, teamAKey), pre, hookArgs("claude", t.TempDir())...)
	mustContain(t, r, 2, "Governor blocked this tool", "could not be reached")
	r = governor(t, envFor(d, teamAKey), pre, hookArgs("claude", t.TempDir(), "--tls")...)
	mustContain(t, r, 2, "Governor blocked this tool", "certificate")
}
