package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input panics, that a failure is always a *Error
// with at least one problem, and that what Parse accepts also validates.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("..", "..", "..", "governor.example.yaml")); err == nil {
		f.Add(data)
	}
	for _, seed := range []string{
		"", "listen: 0.0.0.0:1\nallow_plaintext: true\n", "tenants: [{name: a, api_key: ${TEAM_A_KEY}}]\n",
		"adaptive: {db: {max: 3, max_overload_share: .5}}\n", "root: {quotas: &q {a: 1}, limits: *q}\n",
		"a: [\n", "- 1\n", "---\n---\n", "log: {level: ${X}}\n", "sessions: {min_ttl: 1ns, max_ttl: 1ns, default_ttl: 1ns}\n",
	} {
		f.Add([]byte(seed))
	}
	getenv := env(exampleEnv)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml", getenv)
		if err != nil {
			var cfgErr *Error
			if !errors.As(err, &cfgErr) || len(cfgErr.Problems) == 0 || c != nil {
				t.Fatalf("Parse failed with %T %v and config %v", err, err, c)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that Validate refuses: %v", err)
		}
	})
}
