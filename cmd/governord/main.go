// Command governord is the daemon that decides how much work a tree of tasks
// may create. Without flags it starts in development mode; with -config FILE
// it runs as the file says. See cmd/internal/daemon for what it does and
// governor.example.yaml for every setting.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"governor.dev/governor/cmd/internal/daemon"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // a second signal ends the process at once
	os.Exit(daemon.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
