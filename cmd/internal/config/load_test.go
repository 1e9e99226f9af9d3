package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// env returns a getenv over a fixed set of variables.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// exampleEnv holds the variables governor.example.yaml reads.
var exampleEnv = map[string]string{
	"GOVERNOR_ADMIN_KEY": "admin-key-0123456789",
	"TEAM_A_KEY":         "team-a-key-0123456789",
	"TEAM_B_KEY":         "team-b-key-0123456789",
}

func TestExampleFileLoads(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "governor.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data, "governor.example.yaml", env(exampleEnv))
	if err != nil {
		t.Fatalf("example does not load:\n%v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"listen", c.Listen, DefaultListen},
		{"metrics_listen", c.MetricsListen, DefaultMetricsListen},
		{"admin_key", c.AdminKey, exampleEnv["GOVERNOR_ADMIN_KEY"]},
		{"root db limit", c.Root.Limits["db"], int64(8)},
		{"tenants", len(c.Tenants), 2},
		{"team-a weight", c.Tenants[0].Weight, 2},
		{"team-b default weight", c.Tenants[1].Weight, 1},
		{"team-a child defaults", c.Tenants[0].Defaults.Children.Quotas["tool_calls"], int64(100)},
		{"adaptive db target", c.Adaptive["db"].TargetP95, 250 * time.Millisecond},
		{"sessions max", c.Sessions.MaxTTL, time.Hour},
		{"root http rate", c.Root.Rates["http"], Rate{Limit: 3000, Per: time.Minute, Algorithm: "leaky_bucket", Burst: 100}},
		{"team-a daily tool calls", c.Tenants[0].Rates["tool_calls"], Rate{Limit: 5000, Calendar: "day", Zone: "Europe/Paris"}},
		{"max schedule wait", c.MaxScheduleWait, 5 * time.Minute},
		{"bounds", c.Bounds, boundsFrom(engine.DefaultBounds())},
		{"team-b sessions bound", c.Tenants[1].Bounds, Bounds{Sessions: 20000}},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestEmptyFileGivesDefaults(t *testing.T) {
	for _, data := range []string{"", "# nothing\n", "---\n", "listen:\n"} {
		c, err := Parse([]byte(data), "g.yaml", env(nil))
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		want := base()
		if c.Listen != want.Listen || c.MetricsListen != want.MetricsListen || c.DatabaseURL != "" ||
			c.Sessions != want.Sessions || c.Commit != want.Commit || c.Log != want.Log {
			t.Errorf("%q: got %+v, want the defaults %+v", data, c, want)
		}
	}
}

// TestDefaultRetentionIsSPECs checks that a file without a retention
// section keeps ended nodes 10 minutes and ended leases a minute, as SPEC §2
// and the engine say.
func TestDefaultRetentionIsSPECs(t *testing.T) {
	c, err := Parse(nil, "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Retention{Nodes: 10 * time.Minute, Tombstones: time.Minute}
	if c.Retention != want {
		t.Fatalf("retention %+v, want %+v", c.Retention, want)
	}
	if e := engine.DefaultSettings(); e.NodeRetention != want.Nodes || e.TombstoneTTL != want.Tombstones {
		t.Fatalf("the engine's defaults %+v differ from SPEC's", e)
	}
}

func TestResolvedValues(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		vars map[string]string
		want func(*Config) bool
	}{
		{"metrics off", "metrics_listen: \"off\"\n", nil,
			func(c *Config) bool { return c.MetricsListen == "" }},
		{"metrics empty", "metrics_listen: \"\"\n", nil,
			func(c *Config) bool { return c.MetricsListen == "" }},
		{"initial from the root limit", "root: {limits: {db: 7}}\nadaptive: {db: {max: 10}}\n", nil,
			func(c *Config) bool { return c.Adaptive["db"].Initial == 7 }},
		{"initial from min", "adaptive: {db: {min: 3, max: 10}}\n", nil,
			func(c *Config) bool { return c.Adaptive["db"].Initial == 3 }},
		{"initial as written", "root: {limits: {db: 7}}\nadaptive: {db: {initial: 5, max: 10}}\n", nil,
			func(c *Config) bool { return c.Adaptive["db"].Initial == 5 }},
		{"controller defaults", "adaptive: {db: {max: 10}}\n", nil,
			func(c *Config) bool {
				a := c.Adaptive["db"]
				return a.Min == 1 && a.MaxOverloadShare == 0.1 && a.Interval == time.Second && a.MinSamples == 10
			}},
		{"database url from the environment", "database_url: sqlite:a.db\n",
			map[string]string{DatabaseURLVariable: "postgres://u@h/db"},
			func(c *Config) bool { return c.DatabaseURL == "postgres://u@h/db" }},
		{"empty database url from the environment means memory", "database_url: sqlite:a.db\n",
			map[string]string{DatabaseURLVariable: ""},
			func(c *Config) bool { return c.DatabaseURL == "" }},
		{"variables in numbers and booleans", "allow_plaintext: ${P}\nlisten: 0.0.0.0:7600\nsnapshot_every: ${N}\n",
			map[string]string{"P": "true", "N": "1_000"},
			func(c *Config) bool { return c.AllowPlaintext && c.SnapshotEvery == 1000 }},
		{"dollar escape", "tenants: [{name: a, api_key: \"pa$$word-0123456789\"}]\n", nil,
			func(c *Config) bool { return c.Tenants[0].APIKey == "pa$word-0123456789" }},
		{"anchors are shared", "tenants:\n- {name: a, api_key: key-a-0123456789ab, defaults: &d {quotas: {x: 1}}}\n- {name: b, api_key: key-b-0123456789ab, defaults: *d}\n", nil,
			func(c *Config) bool { return c.Tenants[1].Defaults.Quotas["x"] == 1 }},
		{"rate caps", "root:\n  rates: {http: {limit: 100, per: 1s, algorithm: leaky_bucket, burst: 20}}\ntenants:\n- name: a\n  api_key: key-a-0123456789ab\n  rates: {tools: {limit: 500, calendar: day, zone: Europe/Paris}}\n", nil,
			func(c *Config) bool {
				r := c.Tenants[0].Rates["tools"]
				return c.Root.Rates["http"].Burst == 20 && r.Calendar == "day" && r.Zone == "Europe/Paris" && c.MaxScheduleWait == DefaultMaxScheduleWait
			}},
		{"ipv6 loopback", "listen: \"[::1]:7600\"\n", nil,
			func(c *Config) bool { return c.Listen == "[::1]:7600" }},
		{"non-loopback with tls", "listen: 0.0.0.0:7600\ntls: {cert_file: c.pem, key_file: k.pem}\n", nil,
			func(c *Config) bool { return c.TLS.Enabled() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "g.yaml", env(tt.vars))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(c) {
				t.Errorf("unexpected result: %+v", c)
			}
		})
	}
}

func TestEveryMistakeIsReported(t *testing.T) {
	yaml := "listen: nowhere\nlog: {level: loud}\ntenants:\n  - name: A\n    weight: 0\n    api_key: short\n"
	_, err := Parse([]byte(yaml), "g.yaml", env(nil))
	var cfgErr *Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("got %v, want a *Error", err)
	}
	want := []string{
		`g.yaml:1: listen: must be host:port`,
		`g.yaml:2: log.level: must be one of debug, info, warn, error; got "loud"`,
		`g.yaml:4: tenants[0].name: must be 1 to 64 characters`,
		`g.yaml:5: tenants[0].weight: must be between 1 and 1000, got 0`,
		`g.yaml:6: tenants[0].api_key: must be at least 16 characters`,
	}
	if len(cfgErr.Problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(cfgErr.Problems), len(want), err)
	}
	for i, p := range cfgErr.Problems {
		if !strings.HasPrefix(p.Error(), want[i]) {
			t.Errorf("problem %d = %q, want it to start with %q", i, p.Error(), want[i])
		}
	}
}

func TestValidateDefault(t *testing.T) {
	c := Default()
	if c.DatabaseURL == "" || !strings.HasPrefix(c.DatabaseURL, "sqlite:") || RequiresTLS(c.Listen) {
		t.Fatalf("Default is not a loopback, SQLite configuration: %+v", c)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "tenants[0].api_key: required") {
		t.Fatalf("Default without keys: got %v, want the missing key reported", err)
	}
	c.AdminKey = "generated-admin-key-0123"
	c.Tenants[0].APIKey = "generated-demo-key-0123"
	if err := c.Validate(); err != nil {
		t.Fatalf("Default with keys: %v", err)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "governor.yaml")
	if err := os.WriteFile(path, []byte("log: {format: json}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil || c.Log.Format != "json" {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load of a missing file: got %v, want os.ErrNotExist in the chain", err)
	}
}
