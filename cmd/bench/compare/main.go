// Command compare runs Gubernator v2.13.0 and governord (memory only and on
// SQLite) inside this process on the same loopback rate-limit load, gRPC
// and HTTP/1.1 JSON, in alternating rounds, and prints the side-by-side
// table with ratios and p99; -svg also draws it. It is a module of its own
// so that governord's module never depends on Gubernator.
//
//	cd cmd/bench/compare && go run . -rounds 3 -duration 5s -svg ../../../docs/compare.svg
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	_ "governor.dev/governor/cmd/bench/compare/internal/protoconflict" // first: see its doc
	"governor.dev/governor/cmd/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "compare: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	rounds := flag.Int("rounds", 2, "how many alternating `rounds` each cell runs on every server")
	duration := flag.Duration("duration", 8*time.Second, "how long each run lasts")
	callers := flag.String("callers", "16,64", "comma-separated numbers of concurrent `callers`, one cell each")
	svg := flag.String("svg", "", "also draw the comparison as an SVG chart into this `file`")
	asJSON := flag.Bool("json", false, "print the comparison as JSON instead of a table")
	profiles := flag.String("cpuprofile", "", "write a CPU profile of each server's first round of each cell into this `directory`")
	flag.Parse()
	ns, err := bench.ParseCallers(*callers)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	guber, stopGuber, err := startGubernator(ctx)
	if err != nil {
		return err
	}
	defer stopGuber()
	ours, stopOurs, err := bench.GovernordPeers(ctx, dir)
	if err != nil {
		return err
	}
	defer stopOurs()
	c, err := bench.Compare(ctx, bench.CompareOptions{
		Peers: append([]bench.Peer{guber}, ours...), Callers: ns, Rounds: *rounds, Duration: *duration, ProfileDir: *profiles,
		Progress: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "compare: "+format+"\n", args...) },
	})
	if err != nil {
		return err
	}
	return bench.WriteComparison(c, *asJSON, *svg, os.Stdout)
}
