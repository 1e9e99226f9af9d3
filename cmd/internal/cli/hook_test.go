package cli_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/internal/clientconn"
)

// sources are both CLIs with their recorded payloads.
var sources = []struct{ name, pre, sub, post string }{
	{"claude", "claude/pre_tool_use.json", "claude/pre_tool_use_subagent.json", "claude/post_tool_use.json"},
	{"codex", "codex/pre_tool_use.json", "codex/pre_tool_use_subagent.json", "codex/post_tool_use.json"},
}

func hookArgs(source, stateDir string, extra ...string) []string {
	return append([]string{"hook", "--source", source, "--state-dir", stateDir}, extra...)
}

func TestHookRefusesTheCallPastTheRunsBudget(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			env, state := envFor(d, teamAKey), t.TempDir()
			sid := "run-" + src.name
			for i := 1; i <= 3; i++ {
				r := governor(t, env, payload(t, src.pre, sid, fmt.Sprintf("tool-%d", i), ""), hookArgs(src.name, state)...)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("call %d of a budget of 3 refused\n%s", i, r)
				}
			}
			// The CLI repeating a hook call for a tool use already charged is
			// not charged again.
			if r := governor(t, env, payload(t, src.pre, sid, "tool-2", ""), hookArgs(src.name, state)...); r.code != 0 {
				t.Fatalf("a repeated call for a charged tool use was refused\n%s", r)
			}
			run := a.child(a.child(0, "team-a").GetId(), src.name+":"+sid)
			if used(run, "tool_calls") != 3 {
				t.Fatalf("run used %d tool calls, want 3", used(run, "tool_calls"))
			}
			r := governor(t, env, payload(t, src.pre, sid, "tool-4", ""), hookArgs(src.name, state)...)
			mustContain(t, r, 2, "Governor blocked this tool", `the tool_calls budget of "`+src.name+":"+sid+`" is spent (3 of 3 used)`, "Do not retry; stop and tell the user")
		})
	}
}

func TestHookRefusesASubagentOverTheRunsAgentsBudget(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			env, state := envFor(d, teamAKey), t.TempDir()
			sid := "agents-" + src.name
			if r := governor(t, env, payload(t, src.sub, sid, "t1", "agent-1"), hookArgs(src.name, state)...); r.code != 0 {
				t.Fatalf("the first subagent of a budget of 1 was refused\n%s", r)
			}
			if r := governor(t, env, payload(t, src.sub, sid, "t2", "agent-1"), hookArgs(src.name, state)...); r.code != 0 {
				t.Fatalf("the first subagent's second call was refused\n%s", r)
			}
			r := governor(t, env, payload(t, src.sub, sid, "t3", "agent-2"), hookArgs(src.name, state)...)
			mustContain(t, r, 2, `the agents budget of "`+src.name+":"+sid+`" is spent (1 of 1 used)`, "no more subagents may start")
			// The subagent's own budget comes from the tenant's defaults for
			// children: 2 tool calls.
			r = governor(t, env, payload(t, src.sub, sid, "t4", "agent-1"), hookArgs(src.name, state)...)
			mustContain(t, r, 2, `the tool_calls budget of "agent-1" is spent (2 of 2 used)`)
			run := a.child(a.child(0, "team-a").GetId(), src.name+":"+sid)
			if used(run, "agents") != 1 || used(run, "tool_calls") != 2 || run.GetChildrenCount() != 1 {
				t.Fatalf("run after the refusals: %v", run)
			}
		})
	}
}

// A subagent whose first tool call is refused by the run's spent tool_calls
// stays created with its agents unit charged, once, as the README says.
func TestHookSubagentRefusedAtItsFirstCallKeepsItsAgentsUnit(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	env, state, sid := envFor(d, teamAKey), t.TempDir(), "first-call"
	for i := 1; i <= 3; i++ { // team-a's runs get 3 tool calls
		if r := governor(t, env, payload(t, "claude/pre_tool_use.json", sid, fmt.Sprintf("t%d", i), ""), hookArgs("claude", state)...); r.code != 0 {
			t.Fatalf("call %d of a budget of 3 refused\n%s", i, r)
		}
	}
	for _, tool := range []string{"t4", "t5"} {
		r := governor(t, env, payload(t, "claude/pre_tool_use_subagent.json", sid, tool, "agent-1"), hookArgs("claude", state)...)
		mustContain(t, r, 2, `the tool_calls budget of "claude:`+sid+`" is spent (3 of 3 used)`)
		run := a.child(a.child(0, "team-a").GetId(), "claude:"+sid)
		if used(run, "agents") != 1 || run.GetChildrenCount() != 1 {
			t.Fatalf("after the subagent's refused call %s: agents used %d, children %d; want the subagent created and charged once",
				tool, used(run, "agents"), run.GetChildrenCount())
		}
	}
}

// shortRetention is governord's retention.nodes in the tests that check a
// run outlives it: an ended run without a retention of its own would be
// removed, and its session given a fresh run, within a few reaps.
const shortRetention = 300 * time.Millisecond

// TestHookKeepsACancelledRunRefused cancels a run and finds it refused
// after governord's own retention has passed: the run keeps itself for the
// hook's --ttl.
func TestHookKeepsACancelledRunRefused(t *testing.T) {
	t.Parallel()
	cfg := testConfig("")
	cfg.Retention.Nodes = shortRetention
	d := startGovernord(t, cfg)
	env, state := envFor(d, teamAKey), t.TempDir()
	if r := governor(t, env, payload(t, "claude/pre_tool_use.json", "to-cancel", "t1", ""), hookArgs("claude", state)...); r.code != 0 {
		t.Fatalf("first call refused\n%s", r)
	}
	r := governor(t, envFor(d, adminKey), nil, "cancel", "team-a/claude:to-cancel", "--reason", "runaway")
	mustContain(t, r, 0, "cancelled")
	time.Sleep(3 * shortRetention)
	for i := range 2 {
		r := governor(t, env, payload(t, "claude/pre_tool_use.json", "to-cancel", fmt.Sprintf("t%d", i+2), ""), hookArgs("claude", state)...)
		mustContain(t, r, 2, `the run "claude:to-cancel" was cancelled`, "Do not retry")
	}
}

func TestHookResumedSessionContinuesItsRunAcrossARestart(t *testing.T) {
	t.Parallel()
	url := "sqlite:" + filepath.Join(t.TempDir(), "governor.db")
	d := startGovernord(t, testConfig(url))
	state := t.TempDir()
	for i := 1; i <= 2; i++ {
		if r := governor(t, envFor(d, teamAKey), payload(t, "codex/pre_tool_use.json", "resumed", fmt.Sprintf("t%d", i), ""), hookArgs("codex", state)...); r.code != 0 {
			t.Fatalf("call %d refused\n%s", i, r)
		}
	}
	stopGovernord(t, d)
	d = startGovernord(t, testConfig(url))
	env := envFor(d, teamAKey)
	if r := governor(t, env, payload(t, "codex/pre_tool_use.json", "resumed", "t3", ""), hookArgs("codex", state)...); r.code != 0 {
		t.Fatalf("the resumed session's third call was refused\n%s", r)
	}
	r := governor(t, env, payload(t, "codex/pre_tool_use.json", "resumed", "t4", ""), hookArgs("codex", state)...)
	mustContain(t, r, 2, `(3 of 3 used)`)
	// A forked or new session is a new run with a budget of its own.
	if r := governor(t, env, payload(t, "codex/pre_tool_use.json", "forked", "t1", ""), hookArgs("codex", state)...); r.code != 0 {
		t.Fatalf("a new session was refused\n%s", r)
	}
}

func TestHookRefusesWhenGovernordIsNotThere(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	addr := d.Addr().String()
	stopGovernord(t, d)
	// A listener that accepts and never answers: only the hook's own
	// timeout ends the wait.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cases := []struct{ name, addr, want string }{
		{"stopped", addr, "could not be reached"},
		{"silent", silent.Addr().String(), "did not answer in time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := []string{clientconn.EnvAddr + "=" + c.addr, clientconn.EnvAPIKey + "=" + teamAKey}
			r := governor(t, env, payload(t, "claude/pre_tool_use.json", "s", "t1", ""), hookArgs("claude", t.TempDir(), "--timeout", "1s")...)
			mustContain(t, r, 2, "Governor blocked this tool", c.want)
			if r.took > 20*time.Second {
				t.Fatalf("the hook waited far past its 1s timeout\n%s", r)
			}
		})
	}
}

func TestHookRefusesOnBadSettings(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	good := payload(t, "claude/pre_tool_use.json", "s", "t1", "")
	addr := clientconn.EnvAddr + "=" + d.Addr().String()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		env   []string
		stdin []byte
		args  []string
		want  string
	}{
		{"bad key", []string{addr, clientconn.EnvAPIKey + "=not-a-key-0123456789"}, good, nil, "governord does not accept the API key in GOVERNOR_API_KEY. Set GOVERNOR_API_KEY"},
		{"no key", []string{addr}, good, nil, "GOVERNOR_API_KEY is not set"},
		{"admin key", envFor(d, adminKey), good, nil, "the hook needs a tenant's key"},
		{"tls not a boolean", append(envFor(d, teamAKey), clientconn.EnvTLS+"=maybe"), good, nil, "is not a boolean"},
		{"unreadable CA file", append(envFor(d, teamAKey), clientconn.EnvCAFile+"=/nonexistent/ca.pem"), good, nil, "read CA file"},
		{"malformed address", []string{clientconn.EnvAddr + "=no-port", clientconn.EnvAPIKey + "=" + teamAKey}, good, nil, "is not host:port"},
		{"malformed input", envFor(d, teamAKey), []byte(`{"session_id":`), nil, "not valid JSON"},
		{"missing tool use id", envFor(d, teamAKey), []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash"}`), nil, "lacks tool_use_id"},
		{"no source", envFor(d, teamAKey), good, []string{"hook"}, `--source "" is not an agent CLI`},
		{"unknown source", envFor(d, teamAKey), good, []string{"hook", "--source", "gemini"}, `use claude or codex`},
		{"zero budget", envFor(d, teamAKey), good, []string{"hook", "--source", "claude", "--tool-calls", "0"}, "--tool-calls is 0; it must be at least 1"},
		{"bad timeout", envFor(d, teamAKey), good, []string{"hook", "--source", "claude", "--timeout", "1ms"}, "between 100ms and 10m"},
		{"bad ttl", envFor(d, teamAKey), good, []string{"hook", "--source", "claude", "--ttl", "-1h"}, "--ttl is -1h0m0s"},
		{"hold past the session range", envFor(d, teamBKey), good, []string{"hook", "--source", "claude", "--max-concurrent-tools", "2", "--max-hold", "2h"}, "ttl must be between 1s and 1h"},
		{"unknown flag", envFor(d, teamAKey), good, []string{"hook", "--source", "claude", "--budget", "3"}, "unknown flag: --budget"},
		{"state dir is a file", envFor(d, teamBKey), good, []string{"hook", "--source", "claude", "--max-concurrent-tools", "1", "--state-dir", notDir}, "the hook's state directory is unusable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args == nil {
				args = []string{"hook", "--source", "claude"}
			}
			if !slices.Contains(args, "--state-dir") {
				args = append(args, "--state-dir", t.TempDir())
			}
			r := governor(t, c.env, c.stdin, args...)
			mustContain(t, r, 2, c.want)
			if strings.Contains(r.stderr, "OpenSession") {
				t.Fatalf("the refusal speaks of the API's calls to an agent CLI's user\n%s", r)
			}
			if strings.TrimSpace(r.stderr) == "" {
				t.Fatalf("refusal without a reason on standard error\n%s", r)
			}
		})
	}
}

func TestHookFlagsFillOnlyWhatTheDefaultsLeaveOut(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	flags := []string{"--tool-calls", "10", "--agents", "5", "--agent-tool-calls", "7"}
	// team-a's defaults name tool_calls, agents and the children's
	// tool_calls: they stand. team-b has none: the flags apply.
	for _, c := range []struct {
		key, tenant               string
		tools, agents, agentTools int64
	}{{teamAKey, "team-a", 3, 1, 2}, {teamBKey, "team-b", 10, 5, 7}} {
		env := envFor(d, c.key)
		if r := governor(t, env, payload(t, "claude/pre_tool_use_subagent.json", "flags", "t1", "sub"), hookArgs("claude", t.TempDir(), flags...)...); r.code != 0 {
			t.Fatalf("%s: refused\n%s", c.tenant, r)
		}
		run := a.child(a.child(0, c.tenant).GetId(), "claude:flags")
		sub := a.child(run.GetId(), "sub")
		got := []int64{run.GetResources()["tool_calls"].GetCap(), run.GetResources()["agents"].GetCap(), sub.GetResources()["tool_calls"].GetCap()}
		if got[0] != c.tools || got[1] != c.agents || got[2] != c.agentTools {
			t.Fatalf("%s: caps of run tool_calls, agents and subagent tool_calls = %v, want %d %d %d", c.tenant, got, c.tools, c.agents, c.agentTools)
		}
		if run.GetDeadline() == nil || time.Until(run.GetDeadline().AsTime()) < 23*time.Hour {
			t.Fatalf("%s: run deadline %v, want about 24h from now", c.tenant, run.GetDeadline())
		}
	}
}

func TestHookHoldsAToolsLeaseFromPreToPost(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	env, state := envFor(d, teamBKey), t.TempDir()
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			sid := "lease-" + src.name
			args := hookArgs(src.name, state, "--max-concurrent-tools", "1", "--timeout", "2s")
			if r := governor(t, env, payload(t, src.pre, sid, "t1", ""), args...); r.code != 0 {
				t.Fatalf("first tool refused\n%s", r)
			}
			run := a.child(a.child(0, "team-b").GetId(), src.name+":"+sid)
			if held := run.GetClasses()["tools"].GetHeld(); held != 1 {
				t.Fatalf("run holds %d tools leases while its tool runs, want 1", held)
			}
			r := governor(t, env, payload(t, src.pre, sid, "t2", ""), args...)
			mustContain(t, r, 2, "already runs as many tools at once", "wait for the running ones to finish")
			if r := governor(t, env, payload(t, src.post, sid, "t1", ""), args...); r.code != 0 {
				t.Fatalf("PostToolUse failed\n%s", r)
			}
			if r := governor(t, env, payload(t, src.pre, sid, "t2", ""), args...); r.code != 0 {
				t.Fatalf("the second tool was refused after the first finished\n%s", r)
			}
			if r := governor(t, env, payload(t, src.post, sid, "t2", ""), args...); r.code != 0 {
				t.Fatalf("PostToolUse failed\n%s", r)
			}
			// A PostToolUse with nothing held, or repeated, changes nothing.
			if r := governor(t, env, payload(t, src.post, sid, "t2", ""), args...); r.code != 0 {
				t.Fatalf("a repeated PostToolUse failed\n%s", r)
			}
			run = a.child(a.child(0, "team-b").GetId(), src.name+":"+sid)
			if held, tools := run.GetClasses()["tools"].GetHeld(), used(run, "tool_calls"); held != 0 || tools != 2 {
				t.Fatalf("after both tools: %d leases held, %d tool calls charged; want 0 and 2", held, tools)
			}
		})
	}
}

func TestHookKilledCLILeaksNothingPastTheHold(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	env, state := envFor(d, teamBKey), t.TempDir()
	args := hookArgs("claude", state, "--max-concurrent-tools", "1", "--max-hold", "1s", "--timeout", "3s")
	if r := governor(t, env, payload(t, "claude/pre_tool_use.json", "killed", "t1", ""), args...); r.code != 0 {
		t.Fatalf("first tool refused\n%s", r)
	}
	// No PostToolUse comes: the CLI was killed. Within the 3s timeout the
	// lease has ended by itself and the next tool gets the slot.
	if r := governor(t, env, payload(t, "claude/pre_tool_use.json", "killed", "t2", ""), args...); r.code != 0 {
		t.Fatalf("the slot of a killed CLI's tool was not given back after its hold\n%s", r)
	}
	time.Sleep(1500 * time.Millisecond)
	run := a.child(a.child(0, "team-b").GetId(), "claude:killed")
	if held := run.GetClasses()["tools"].GetHeld(); held != 0 {
		t.Fatalf("%d leases still held past their hold", held)
	}
	// The files the killed tools left are swept by the next PreToolUse.
	if r := governor(t, env, payload(t, "claude/pre_tool_use.json", "killed", "t3", ""), args...); r.code != 0 {
		t.Fatalf("third tool refused\n%s", r)
	}
	if entries, _ := filepath.Glob(filepath.Join(state, "*.lease")); len(entries) != 1 {
		t.Fatalf("lease files: %v, want the third tool's only", entries)
	}
}

func TestHookWatchdogRefusesWhenTheCLINeverClosesStandardInput(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	cmd := exec.Command(governorBinary(t), hookArgs("claude", t.TempDir(), "--timeout", "1s")...)
	cmd.Env = append([]string{"HOME=" + t.TempDir()}, envFor(d, teamAKey)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Half a payload, and standard input stays open.
	if _, err := stdin.Write([]byte(`{"session_id": "s", `)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the hook still waits for its input 20s after its 1s timeout")
	}
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), "did not decide within --timeout 1s") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestHookGivesBackALeaseItCannotRecord(t *testing.T) {
	t.Parallel()
	// A directory under /proc reads as empty and cannot be created, even
	// by root: the lease is granted and its file cannot be written.
	unwritable := "/proc/governor-hook-test-state"
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs /proc")
	}
	d := startGovernord(t, testConfig(""))
	a := adminOf(t, d)
	r := governor(t, envFor(d, teamBKey), payload(t, "claude/pre_tool_use.json", "unrecorded", "t1", ""), hookArgs("claude", unwritable, "--max-concurrent-tools", "1")...)
	mustContain(t, r, 2, "the hook's state directory is unusable")
	run := a.child(a.child(0, "team-b").GetId(), "claude:unrecorded")
	if held := run.GetClasses()["tools"].GetHeld(); held != 0 {
		t.Fatalf("%d tools leases held after a refusal; the lease must be given back", held)
	}
}

// TestHookRefusesARunPastItsTTL finds a run refused once its TTL has
// passed, and still refused after governord's own retention has passed too.
func TestHookRefusesARunPastItsTTL(t *testing.T) {
	t.Parallel()
	cfg := testConfig("")
	cfg.Retention.Nodes = shortRetention
	d := startGovernord(t, cfg)
	env, state := envFor(d, teamBKey), t.TempDir() // no budget: only the TTL ends the run
	args := hookArgs("codex", state, "--ttl", "2s")
	if r := governor(t, env, payload(t, "codex/pre_tool_use.json", "short", "t1", ""), args...); r.code != 0 {
		t.Fatalf("first call refused\n%s", r)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := governor(t, env, payload(t, "codex/pre_tool_use.json", "short", fmt.Sprintf("t-%d", time.Now().UnixNano()), ""), args...)
		if r.code == 2 {
			mustContain(t, r, 2, `the run "codex:short" is past its deadline`)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a run with a 2s TTL still runs tools after 15s\n%s", r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * shortRetention) // well inside the 2s the run keeps itself once ended
	r := governor(t, env, payload(t, "codex/pre_tool_use.json", "short", "t-last", ""), args...)
	mustContain(t, r, 2, `the run "codex:short" is past its deadline`)
}
