package cli_test

import (
	"encoding/json"
	"testing"
)

func TestExplainVerb(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	adminEnv, teamEnv := envFor(d, adminKey), envFor(d, teamAKey)
	mustContain(t, governor(t, adminEnv, nil, "set", "quota", "team-a", "tool_calls", "2"), 0)
	mustContain(t, governor(t, teamEnv, nil, "consume", ".", "tool_calls", "2"), 0)

	t.Run("a spent quota", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "explain", ".", "tool_calls"), 0,
			"tool_calls on #", `quota on "team-a" #`, "2 of 2 used", "estimate: unknown: a quota binds")
	})
	t.Run("every name on the node", func(t *testing.T) {
		mustContain(t, governor(t, adminEnv, nil, "explain", "team-a"), 0, "2 of 2 used")
	})
	t.Run("nothing binds", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "explain", ".", "gpu"), 0, "gpu on #", "nothing binds; it can go ahead now")
	})
	t.Run("json", func(t *testing.T) {
		r := governor(t, teamEnv, nil, "explain", ".", "tool_calls", "-o", "json")
		mustContain(t, r, 0)
		var x struct {
			Caps []struct {
				Kind string `json:"kind"`
				Used string `json:"used"`
			} `json:"caps"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &x); err != nil || len(x.Caps) != 1 || x.Caps[0].Kind != "CAP_KIND_QUOTA" || x.Caps[0].Used != "2" {
			t.Fatalf("json %+v (%v)\n%s", x, err, r)
		}
	})
	t.Run("mistakes", func(t *testing.T) {
		mustContain(t, governor(t, teamEnv, nil, "explain", ".", "Not A Name"), 2, "Field name must be")
		mustContain(t, governor(t, teamEnv, nil, "explain", ".", "x", "--amount", "-1"), 2, "negative")
		mustContain(t, governor(t, teamEnv, nil, "explain"), 2, "arg")
	})
}
