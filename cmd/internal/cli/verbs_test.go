package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"governor.dev/governor/internal/clientconn"
)

func TestAdminVerbsEndToEnd(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	adminEnv, teamEnv := envFor(d, adminKey), envFor(d, teamAKey)
	// A run and a subagent, made by the hook as an agent CLI would.
	if r := governor(t, teamEnv, payload(t, "claude/pre_tool_use_subagent.json", "verbs", "t1", "sub"), hookArgs("claude", t.TempDir())...); r.code != 0 {
		t.Fatalf("hook refused\n%s", r)
	}

	t.Run("describe text", func(t *testing.T) {
		r := governor(t, adminEnv, nil, "describe", "team-a", "--depth", "2")
		mustContain(t, r, 0, "team-a #", "defaults: quotas agents=1 tool_calls=3; children's quotas tool_calls=2",
			"\n  claude:verbs #", "agents 1/1", "tool_calls 1/3", "\n    sub #", "tool_calls 1/2")
	})
	t.Run("describe json", func(t *testing.T) {
		r := governor(t, teamEnv, nil, "describe", "-o", "json")
		mustContain(t, r, 0)
		var tree struct {
			Node struct {
				Name      string `json:"name"`
				Resources map[string]struct {
					Used string `json:"used"`
				} `json:"resources"`
			} `json:"node"`
			Children []struct {
				Node struct {
					Name string `json:"name"`
				} `json:"node"`
			} `json:"children"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &tree); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r)
		}
		if tree.Node.Name != "team-a" || len(tree.Children) != 1 || tree.Children[0].Node.Name != "claude:verbs" || tree.Node.Resources["tool_calls"].Used != "1" {
			t.Fatalf("tree = %+v", tree)
		}
	})
	t.Run("set quota then consume to the cap", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "set", "quota", "claude:verbs", "tool_calls", "2"), 0, "tool_calls 1/2")
		mustContain(t, governor(t, teamEnv, nil, "consume", "claude:verbs", "tool_calls", "1"), 0, "consumed 1 tool_calls; 0 left")
		r := governor(t, teamEnv, nil, "consume", "claude:verbs", "tool_calls", "1")
		mustContain(t, r, 1, "claude:verbs")
		mustContain(t, governor(t, teamEnv, nil, "set", "quota", "claude:verbs", "tool_calls", "none"), 0)
		run := a.child(a.child(0, "team-a").GetId(), "claude:verbs")
		if run.GetResources()["tool_calls"].Cap != nil {
			t.Fatalf("cap not removed: %v", run)
		}
	})
	t.Run("set rate then consume to it", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "set", "rate", "claude:verbs", "api", "2/1h"), 0,
			"rate cap on api: 2 per 1h0m0s (token bucket), 2 admitted now")
		for range 2 {
			mustContain(t, governor(t, teamEnv, nil, "consume", "claude:verbs", "api", "1"), 0)
		}
		mustContain(t, governor(t, teamEnv, nil, "consume", "claude:verbs", "api", "1"), 1)
		mustContain(t, governor(t, teamEnv, nil, "set", "rate", "claude:verbs", "api", "100/day", "--zone", "Europe/Paris"), 0,
			"100 per day in Europe/Paris (token bucket)")
		mustContain(t, governor(t, teamEnv, nil, "set", "rate", "claude:verbs", "api", "5/1s", "--leaky", "--burst", "10"), 0,
			"5 per 1s (leaky bucket, burst 10)")
		mustContain(t, governor(t, teamEnv, nil, "set", "rate", "claude:verbs", "api", "none"), 0, "no rate cap on api")
		run := a.child(a.child(0, "team-a").GetId(), "claude:verbs")
		if run.GetRates()["api"] != nil {
			t.Fatalf("rate cap not removed: %v", run.GetRates())
		}
	})
	t.Run("set limit", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "set", "limit", "claude:verbs", "tools", "4"), 0, "[tools] 0/4 held")
	})
	t.Run("tenant key cannot change its own caps", func(t *testing.T) {
		r := governor(t, teamEnv, nil, "set", "quota", ".", "tool_calls", "5")
		mustContain(t, r, 1, "Permission denied")
		mustContain(t, governor(t, adminEnv, nil, "set", "quota", "team-a", "tool_calls", "50"), 0, "tool_calls 2/50")
	})
	t.Run("defaults", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "defaults", "."), 0, "quotas agents=1 tool_calls=3")
		r := governor(t, teamEnv, nil, "defaults", ".", "--quota", "tool_calls=800", "--quota", "agents=none", "--child-limit", "tools=2")
		mustContain(t, r, 0, "quotas tool_calls=800; children's quotas tool_calls=2; children's limits tools=2")
		team := a.child(0, "team-a")
		if team.GetDefaults().GetQuotas()["tool_calls"] != 800 || len(team.GetDefaults().GetQuotas()) != 1 {
			t.Fatalf("defaults on record: %v", team.GetDefaults())
		}
		mustContain(t, governor(t, teamEnv, nil, "defaults", ".", "--clear"), 0, "none")
	})
	t.Run("validate", func(t *testing.T) {
		r := governor(t, teamEnv, nil, "validate", "999999")
		mustContain(t, r, 1, "Lease 999999 is unknown")
		if n := strings.Count(strings.ToLower(r.stdout+r.stderr), "is unknown"); n != 1 || r.stderr != "" {
			t.Fatalf("the answer is printed %d times, want once\n%s", n, r)
		}
		state := t.TempDir()
		if r := governor(t, envFor(d, teamBKey), payload(t, "claude/pre_tool_use.json", "v", "t1", ""), hookArgs("claude", state, "--max-concurrent-tools", "1")...); r.code != 0 {
			t.Fatalf("hook refused\n%s", r)
		}
		run := a.child(a.child(0, "team-b").GetId(), "claude:v")
		lease := leaseOn(t, a, run.GetId())
		mustContain(t, governor(t, envFor(d, teamBKey), nil, "validate", fmt.Sprint(lease)), 0, "is held")
		mustContain(t, governor(t, envFor(d, teamBKey), payload(t, "claude/post_tool_use.json", "v", "t1", ""), hookArgs("claude", state)...), 0)
		mustContain(t, governor(t, envFor(d, teamBKey), nil, "validate", fmt.Sprint(lease)), 1, "was released")
	})
	t.Run("cancel", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "cancel", "claude:verbs"), 0, "cancelled")
		mustContain(t, governor(t, teamEnv, nil, "consume", "claude:verbs", "tool_calls", "1"), 1, "has ended")
		mustContain(t, governor(t, teamEnv, nil, "cancel", "."), 2, "may not cancel")
	})
}

func TestVerbsRejectMistakesWithExitTwo(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	env := envFor(d, teamAKey)
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{env, []string{"set", "cap", "1", "x", "1"}, `"cap" is not something set changes`},
		{env, []string{"set", "quota", "1", "x", "lots"}, "at least 0, or none"},
		{env, []string{"set", "quota", "1", "x"}, "accepts 4 arg(s)"},
		{env, []string{"set", "rate", "1", "x", "5"}, "is not LIMIT/PERIOD"},
		{env, []string{"set", "rate", "1", "x", "5/fortnight"}, "is neither a duration"},
		{env, []string{"set", "rate", "1", "x", "5/1m", "--zone", "Europe/Paris"}, "--zone goes with a calendar unit"},
		{env, []string{"set", "rate", "1", "x", "5/1m", "--burst", "3"}, "add --leaky"},
		{env, []string{"set", "rate", "1", "x", "5/day", "--leaky"}, "not a calendar unit"},
		{env, []string{"set", "rate", "1", "x", "none", "--leaky"}, "none removes the rate cap"},
		{env, []string{"set", "rate", "1", "x", "0/1m"}, "is not LIMIT/PERIOD"},
		{env, []string{"consume", "1", "x", "0"}, "at least 1"},
		{env, []string{"validate", "abc"}, "not a lease id"},
		{env, []string{"describe", "-o", "yaml"}, "use text or json"},
		{env, []string{"describe", "--depth", "99"}, "out of range"},
		{env, []string{"describe", "nobody/here"}, `has no child named "nobody"`},
		{env, []string{"defaults", ".", "--quota", "tool_calls"}, "not NAME=VALUE"},
		{env, []string{"frobnicate"}, "unknown command"},
		{env, []string{"set", "quota", "1", "BAD NAME", "1"}, "Field resource must be 1 to 64 characters"},
		{[]string{clientconn.EnvAddr + "=127.0.0.1:1", clientconn.EnvAPIKey + "=" + teamAKey}, []string{"describe"}, "could not be reached"},
		{[]string{clientconn.EnvAddr + "=" + d.Addr().String()}, []string{"describe"}, "GOVERNOR_API_KEY is not set"},
		{env, []string{"describe", "--addr", "nope"}, "is not host:port"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			mustContain(t, governor(t, c.env, nil, c.args...), 2, c.want)
		})
	}
	mustContain(t, governor(t, []string{clientconn.EnvAddr + "=" + d.Addr().String(), clientconn.EnvAPIKey + "=wrong-key-0123456789"}, nil, "describe"), 1, "matches none")
}
