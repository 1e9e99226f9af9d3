package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CompareFlags are govbench's flags of the comparison mode.
type CompareFlags struct {
	GRPCAddr string // the peer's gRPC host:port
	HTTPURL  string // the peer's HTTP JSON base URL; "" for gRPC only
	Key      string // sent to the peer as Authorization: Bearer
	Callers  string // comma-separated
	Rounds   int
	Duration time.Duration
	SVG      string // a file to draw the chart into; "" for none
}

// ParseCallers reads a comma-separated list of numbers of callers.
func ParseCallers(s string) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: callers %q: each entry must be a positive whole number", ErrOptions, s)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// GovernordPeers starts the two governords of a comparison inside this
// process, memory only and on SQLite in dir, and returns them with how to
// stop both.
func GovernordPeers(ctx context.Context, dir string) ([]Peer, func(), error) {
	var peers []Peer
	var stops []func(context.Context) error
	stopAll := func() {
		for _, stop := range stops {
			_ = stop(context.WithoutCancel(ctx))
		}
	}
	for _, s := range []struct{ name, url string }{
		{"governord, memory", ""},
		{"governord, SQLite", "sqlite:" + filepath.Join(dir, "compare.db")},
	} {
		p, stop, err := StartRateGovernord(ctx, s.name, s.url)
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		peers, stops = append(peers, p), append(stops, stop)
	}
	return peers, stopAll, nil
}

// WriteComparison prints c as a table, or as JSON, and draws it into
// svgPath unless that is "".
func WriteComparison(c *Comparison, asJSON bool, svgPath string, stdout io.Writer) error {
	var err error
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(c)
	} else {
		err = c.Table().WriteText(stdout)
	}
	if err != nil || svgPath == "" {
		return err
	}
	f, err := os.Create(svgPath)
	if err != nil {
		return err
	}
	return errors.Join(c.WriteSVG(f), f.Close())
}

// runCompare is govbench -compare: the rate-limit load on the peer and on
// governord (memory and SQLite, in this process), side by side.
func runCompare(ctx context.Context, f CompareFlags, dir string, asJSON bool, stdout, stderr io.Writer) int {
	callers, err := ParseCallers(f.Callers)
	if err != nil {
		fmt.Fprintf(stderr, "govbench: -compare-callers: %v\n", err)
		return ExitUsage
	}
	if f.HTTPURL != "" && !strings.HasPrefix(f.HTTPURL, "http://") && !strings.HasPrefix(f.HTTPURL, "https://") {
		fmt.Fprintf(stderr, "govbench: -compare-http %q must be a URL starting with http:// or https://\n", f.HTTPURL)
		return ExitUsage
	}
	ours, stop, err := GovernordPeers(ctx, dir)
	if err != nil {
		fmt.Fprintf(stderr, "govbench: %v\n", err)
		return ExitFailure
	}
	defer stop()
	peer := Peer{Name: "peer " + f.GRPCAddr, GRPCAddr: f.GRPCAddr, HTTPURL: strings.TrimSuffix(f.HTTPURL, "/"), Key: f.Key}
	c, err := Compare(ctx, CompareOptions{
		Peers: append([]Peer{peer}, ours...), Callers: callers, Rounds: f.Rounds, Duration: f.Duration,
		Progress: func(format string, a ...any) { fmt.Fprintf(stderr, "govbench: "+format+"\n", a...) },
	})
	if err == nil {
		err = WriteComparison(c, asJSON, f.SVG, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "govbench: %v\n", err)
		if errors.Is(err, ErrOptions) {
			return ExitUsage
		}
		return ExitFailure
	}
	return ExitOK
}
