package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"governor.dev/governor/cmd/internal/hook"
)

type hookFlags struct {
	source   string
	timeout  time.Duration
	ttl      time.Duration
	maxHold  time.Duration
	stateDir string
	budgets  hook.Budgets
}

func newHook(sys IO, conn *connFlags) *cobra.Command {
	f := &hookFlags{}
	cmd := &cobra.Command{
		Use:   "hook --source claude|codex",
		Short: "Decide one PreToolUse or PostToolUse call of an agent CLI: exit 0 allows, exit 2 refuses",
		Long: "hook reads the CLI's hook payload on standard input. PreToolUse charges one tool_calls unit\n" +
			"to the run \"<source>:<session_id>\" (and a subagent's node, which costs the run one agents unit),\n" +
			"and takes a tools lease while the tool runs when the run has a tools limit; PostToolUse\n" +
			"releases it. Any failure refuses the tool with a reason on standard error, within --timeout.",
		Args: args(cobra.NoArgs),
		// The hook prints its own refusal and ends the process itself.
		RunE: func(cmd *cobra.Command, _ []string) error {
			sys.Exit(runHook(cmd, sys, conn, f))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.source, "source", "", "the agent CLI calling the hook: claude or codex (required)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Second, "refuse the tool if governord has not decided within this long")
	fl.DurationVar(&f.ttl, "ttl", 24*time.Hour, "how long after its first tool call a run is refused everything")
	fl.DurationVar(&f.maxHold, "max-hold", 15*time.Minute, "the longest a tool holds its tools lease when PostToolUse never comes")
	fl.StringVar(&f.stateDir, "state-dir", "", "where lease files wait for PostToolUse (default: the user's cache directory)")
	fl.Int64Var(&f.budgets.ToolCalls, "tool-calls", 0, "tool calls of a run, where the tenant's defaults set none")
	fl.Int64Var(&f.budgets.Agents, "agents", 0, "subagents of a run, where the tenant's defaults set none")
	fl.Int64Var(&f.budgets.AgentToolCalls, "agent-tool-calls", 0, "tool calls of each subagent, where the defaults set none")
	fl.Int64Var(&f.budgets.MaxConcurrentTools, "max-concurrent-tools", 0, "tools a run may run at once, where the defaults set none (needs the PostToolUse hook too)")
	return cmd
}

// runHook decides the payload and returns the exit code, after printing a
// refusal. A watchdog refuses at the deadline whatever the call is doing,
// even reading a standard input that never ends.
func runHook(cmd *cobra.Command, sys IO, conn *connFlags, f *hookFlags) int {
	start := time.Now()
	var once sync.Once
	finish := func(err error) int {
		code := ExitOK
		once.Do(func() {
			if err != nil {
				fmt.Fprintln(sys.Stderr, hook.Explain(err).Message)
				code = ExitUsage
			}
		})
		return code
	}
	if f.timeout < 100*time.Millisecond || f.timeout > 10*time.Minute {
		return finish(fmt.Errorf("--timeout is %s; it must be between 100ms and 10m", f.timeout))
	}
	watchdog := time.AfterFunc(f.timeout, func() {
		ran := false
		once.Do(func() {
			ran = true
			fmt.Fprintln(sys.Stderr, hook.Blocked(fmt.Sprintf("governord did not decide within --timeout %s.", f.timeout), nil).Message)
		})
		if ran {
			sys.Exit(ExitUsage)
		}
	})
	defer watchdog.Stop()
	reserve := min(f.timeout/5, time.Second)
	ctx, cancel := context.WithDeadline(cmd.Context(), start.Add(f.timeout-reserve))
	defer cancel()
	cleanup, cancelCleanup := context.WithDeadline(context.WithoutCancel(ctx), start.Add(f.timeout-reserve/4))
	defer cancelCleanup()
	return finish(decide(ctx, cleanup, cmd, sys, conn, f))
}

func decide(ctx, cleanup context.Context, cmd *cobra.Command, sys IO, conn *connFlags, f *hookFlags) error {
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	cfg, err := conn.config(cmd)
	if err != nil {
		return err
	}
	in, err := hook.ReadInput(sys.Stdin)
	if err != nil {
		return err
	}
	r, err := hook.New(cfg, opts)
	if err != nil {
		return err
	}
	return r.Run(ctx, cleanup, in)
}

// options checks the flags.
func (f *hookFlags) options(cmd *cobra.Command) (hook.Options, error) {
	src, err := hook.ParseSource(f.source)
	if err != nil {
		return hook.Options{}, err
	}
	if f.ttl <= 0 {
		return hook.Options{}, fmt.Errorf("--ttl is %s; it must be positive, such as 24h", f.ttl)
	}
	if f.maxHold < time.Second {
		return hook.Options{}, fmt.Errorf("--max-hold is %s; it must be at least 1s, and with --timeout within governord's session TTL range", f.maxHold)
	}
	b := f.budgets
	for _, v := range []struct {
		flag  string
		value int64
	}{{"tool-calls", b.ToolCalls}, {"agents", b.Agents}, {"agent-tool-calls", b.AgentToolCalls}, {"max-concurrent-tools", b.MaxConcurrentTools}} {
		if cmd.Flags().Changed(v.flag) && v.value < 1 {
			return hook.Options{}, fmt.Errorf("--%s is %d; it must be at least 1, or left out for no cap", v.flag, v.value)
		}
	}
	dir := f.stateDir
	if dir == "" {
		if dir, err = hook.DefaultStateDir(); err != nil {
			return hook.Options{}, err
		}
	}
	return hook.Options{Source: src, Budgets: f.budgets, TTL: f.ttl, MaxHold: f.maxHold, Wait: f.timeout, StateDir: dir}, nil
}
