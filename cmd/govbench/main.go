// Command govbench runs the same workloads with and without Governor
// against a simulated downstream service, then breaks things on purpose,
// and prints one table per scenario (or JSON with -json). See
// docs/benchmark.md for what each scenario does and what it measured.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"governor.dev/governor/cmd/internal/bench"
)

func main() {
	if code, ok := bench.ServeGovernord(); ok {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
