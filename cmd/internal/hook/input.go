package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Source names the agent CLI a payload comes from; it prefixes run names.
type Source string

// The agent CLIs the hook understands.
const (
	Claude Source = "claude"
	Codex  Source = "codex"
)

// ParseSource checks a --source value.
func ParseSource(s string) (Source, error) {
	switch Source(s) {
	case Claude, Codex:
		return Source(s), nil
	}
	return "", fmt.Errorf("--source %q is not an agent CLI the hook knows; use claude or codex", s)
}

// Event is the hook event a payload is for.
type Event string

// The events the hook handles.
const (
	PreToolUse  Event = "PreToolUse"
	PostToolUse Event = "PostToolUse"
)

// MaxInput bounds the payload read from standard input. A PostToolUse
// payload carries the tool's whole response, so the bound is generous.
const MaxInput = 64 << 20

// maxID bounds session_id, agent_id and tool_use_id, so that the names and
// request ids made of them stay within governord's 256 bytes.
const maxID = 120

// Input is the part of a PreToolUse or PostToolUse payload the hook uses.
// Both CLIs send these fields under the same names; every other field
// (transcript_path, cwd, permission_mode, model, turn_id, tool_response…)
// is ignored.
type Input struct {
	// SessionID names the run: shared by a session and its subagents, kept
	// on resume, new on fork.
	SessionID string `json:"session_id"`
	// Event is hook_event_name.
	Event Event `json:"hook_event_name"`
	// ToolName is the tool about to run, or that ran.
	ToolName string `json:"tool_name"`
	// ToolUseID names one tool call; a repeated hook call for it carries the
	// same id.
	ToolUseID string `json:"tool_use_id"`
	// AgentID is set inside a subagent, and names it.
	AgentID string `json:"agent_id"`
	// AgentType is the subagent's kind, for display.
	AgentType string `json:"agent_type"`
}

// ReadInput reads and checks one payload. A payload that is not a single
// JSON object, or that lacks session_id, hook_event_name, tool_name or
// tool_use_id, is an error wrapping ErrInput that says what is wrong.
func ReadInput(r io.Reader) (Input, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return Input{}, fmt.Errorf("%w: read standard input: %w", ErrInput, err)
	}
	if len(data) > MaxInput {
		return Input{}, fmt.Errorf("%w: the payload is larger than %d MiB", ErrInput, MaxInput>>20)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Input{}, fmt.Errorf("%w: standard input is empty; the hook expects the CLI's JSON payload", ErrInput)
	}
	if data[0] != '{' {
		return Input{}, fmt.Errorf("%w: the payload is not a JSON object", ErrInput)
	}
	var in Input
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return Input{}, fmt.Errorf("%w: the payload is not valid JSON of the documented shape: %w", ErrInput, err)
	}
	if dec.More() {
		return Input{}, fmt.Errorf("%w: the payload holds more than one JSON value", ErrInput)
	}
	return in, in.check()
}

func (in Input) check() error {
	required := []struct{ name, value string }{
		{"session_id", in.SessionID}, {"hook_event_name", string(in.Event)},
		{"tool_name", in.ToolName}, {"tool_use_id", in.ToolUseID},
	}
	var missing []string
	for _, f := range required {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: the payload lacks %s", ErrInput, strings.Join(missing, ", "))
	}
	if in.Event != PreToolUse && in.Event != PostToolUse {
		return fmt.Errorf("%w: hook_event_name is %q; the hook handles PreToolUse and PostToolUse only", ErrInput, in.Event)
	}
	for _, f := range []struct{ name, value string }{{"session_id", in.SessionID}, {"agent_id", in.AgentID}, {"tool_use_id", in.ToolUseID}} {
		if !utf8.ValidString(f.value) || len(f.value) > maxID {
			return fmt.Errorf("%w: %s must be valid UTF-8 of at most %d bytes", ErrInput, f.name, maxID)
		}
	}
	return nil
}

// RunName is the name of the run's node under the tenant.
func (in Input) RunName(src Source) string { return string(src) + ":" + in.SessionID }

// RequestID is the request id that makes a repeated hook call for the same
// tool use idempotent.
func (in Input) RequestID(src Source) string { return in.RunName(src) + "/" + in.ToolUseID }
