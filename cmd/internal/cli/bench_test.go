package cli_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"
)

// benchHook runs the real binary once per PreToolUse (and PostToolUse when
// post is set), each a new tool use of one run: what an agent CLI pays per
// tool call.
func benchHook(b *testing.B, key string, post bool, extra ...string) {
	d := startGovernord(b, testConfig(""))
	bin := governorBinary(b)
	env := envFor(d, key)
	state := b.TempDir()
	args := hookArgs("claude", state, extra...)
	b.ResetTimer()
	for i := range b.N {
		for _, file := range []string{"claude/pre_tool_use.json", "claude/post_tool_use.json"}[:1+btoi(post)] {
			cmd := exec.Command(bin, args...)
			cmd.Env = append([]string{"HOME=" + state}, env...)
			cmd.Stdin = bytes.NewReader(payload(b, file, "bench", fmt.Sprintf("t%d", i), ""))
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	}
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// BenchmarkHookPreToolUse: the API key alone, two calls (EnsureNode, Consume).
func BenchmarkHookPreToolUse(b *testing.B) { benchHook(b, teamBKey, false) }

// BenchmarkHookPreToolUseReadingDefaults: a budget flag makes the hook read
// the tenant's defaults over a session of its own.
func BenchmarkHookPreToolUseReadingDefaults(b *testing.B) {
	benchHook(b, teamBKey, false, "--tool-calls", "1000000000")
}

// BenchmarkHookPreAndPostWithLease: a tools lease from PreToolUse to
// PostToolUse, two processes per tool call.
func BenchmarkHookPreAndPostWithLease(b *testing.B) {
	benchHook(b, teamBKey, true, "--max-concurrent-tools", "4")
}
