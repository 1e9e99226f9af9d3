// Command governor is the operator's and the agent user's tool for
// governord: the hook that budgets Claude Code and Codex runs, the terminal
// screen, and the admin verbs. See cmd/internal/cli.
package main

import (
	"os"

	"governor.dev/governor/cmd/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Exit: os.Exit}))
}
