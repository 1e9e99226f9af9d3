package hook

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFixturesParse(t *testing.T) {
	cases := []struct {
		file  string
		event Event
		tool  string
		agent string
	}{
		{"claude/pre_tool_use.json", PreToolUse, "Bash", ""},
		{"claude/pre_tool_use_subagent.json", PreToolUse, "Read", "a4e1c07b"},
		{"claude/post_tool_use.json", PostToolUse, "Bash", ""},
		{"codex/pre_tool_use.json", PreToolUse, "Bash", ""},
		{"codex/pre_tool_use_subagent.json", PreToolUse, "Bash", "019a7c3f-0b90-7c55-92e8-4d1a6f0e7b23"},
		{"codex/post_tool_use.json", PostToolUse, "Bash", ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			in, err := ReadInput(f)
			if err != nil {
				t.Fatal(err)
			}
			if in.Event != c.event || in.ToolName != c.tool || in.AgentID != c.agent || in.SessionID == "" || in.ToolUseID == "" {
				t.Fatalf("got %+v", in)
			}
		})
	}
}

func TestMalformedInputIsRefusedWithTheReason(t *testing.T) {
	cases := []struct {
		name, payload, want string
	}{
		{"empty", "", "standard input is empty"},
		{"not json", "PreToolUse Bash", "not a JSON object"},
		{"array", `[{"session_id":"s"}]`, "not a JSON object"},
		{"broken", `{"session_id": "s",`, "not valid JSON"},
		{"wrong type", `{"session_id": 7, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "t"}`, "not valid JSON"},
		{"two values", `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t"} {}`, "more than one JSON value"},
		{"no session", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t"}`, "lacks session_id"},
		{"no tool use id", `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash"}`, "lacks tool_use_id"},
		{"several missing", `{"session_id":"s"}`, "lacks hook_event_name, tool_name, tool_use_id"},
		{"other event", `{"session_id":"s","hook_event_name":"Stop","tool_name":"Bash","tool_use_id":"t"}`, "PreToolUse and PostToolUse only"},
		{"long id", `{"session_id":"` + strings.Repeat("x", 121) + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_use_id":"t"}`, "at most 120 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadInput(strings.NewReader(c.payload))
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrInput saying %q", err, c.want)
			}
			msg := Explain(err).Message
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) || !strings.Contains(msg, "Do not retry") {
				t.Fatalf("refusal %q does not explain %q", msg, c.want)
			}
		})
	}
}

func TestUnknownFieldsAreIgnored(t *testing.T) {
	in, err := ReadInput(strings.NewReader(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t","future_field":{"x":[1,2]}}`))
	if err != nil || in.Event != PostToolUse {
		t.Fatalf("in = %+v, err = %v", in, err)
	}
	if got := in.RequestID(Codex); got != "codex:s/t" {
		t.Fatalf("request id = %q", got)
	}
}
