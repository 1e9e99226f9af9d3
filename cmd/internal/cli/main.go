package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// IO is what a command reads and writes, and how the process ends early.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Exit ends the process at once; the hook's watchdog calls it when its
	// own deadline passes.
	Exit func(code int)
}

// callTimeout bounds one admin verb.
const callTimeout = 30 * time.Second

// Main runs the governor command with args and returns its exit code. A
// panic is caught and ends as exit 2 with a message, never as a crash.
func Main(args []string, sys IO) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(sys.Stderr, "governor: internal error: %v\n", p)
			code = ExitUsage
		}
	}()
	root := newRoot(sys)
	root.SetArgs(singleDash(args))
	err := root.ExecuteContext(context.Background())
	if err != nil && !errors.Is(err, errShown) {
		fmt.Fprintln(sys.Stderr, "governor: "+message(err))
	}
	return exitCode(err)
}

func newRoot(sys IO) *cobra.Command {
	conn := &connFlags{}
	root := &cobra.Command{
		Use:   "governor",
		Short: "Budgets for agent CLI runs, a live view of governord's tree, and admin verbs",
		Long: "governor talks to governord with the API key in GOVERNOR_API_KEY, at GOVERNOR_ADDR\n" +
			"(host:port, or a comma-separated list of a cluster's nodes; GOVERNOR_TLS=1 or\n" +
			"GOVERNOR_CA_FILE for TLS). Exit codes: 0 done, 1 refused or\n" +
			"denied by governord, 2 a mistake in the command line or settings, or no governord.",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(sys.Stdin)
	root.SetOut(sys.Stdout)
	root.SetErr(sys.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usagef("%v", err) })
	conn.register(root)
	root.AddCommand(
		newHook(sys, conn), newUI(sys, conn), newDescribe(conn), newExplain(conn), newSet(conn), newDefaults(conn),
		newCancel(conn), newConsume(conn), newValidate(conn), newCluster(conn),
	)
	return root
}

// args checks a command's positional arguments as a usage mistake.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usagef("%v; usage: %s", err, cmd.UseLine())
		}
		return nil
	}
}

// singleDash accepts governord's spelling -config FILE for --config FILE.
func singleDash(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "-config" || strings.HasPrefix(a, "-config=") {
			a = "-" + a
		}
		out[i] = a
	}
	return out
}
