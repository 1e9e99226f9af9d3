package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CompareOptions say what the side-by-side comparison runs.
type CompareOptions struct {
	// Peers are the servers compared; the first is the one the others'
	// ratios are against.
	Peers []Peer
	// Callers are the numbers of concurrent callers, one cell each.
	Callers []int
	// Rounds is how many times each cell runs on every peer, the peers
	// taking turns in an order that alternates from round to round.
	Rounds int
	// Duration is how long each run lasts.
	Duration time.Duration
	// Progress receives a line as each run ends; nil: none.
	Progress func(format string, args ...any)
	// ProfileDir, when set, receives a CPU profile of this process during
	// each peer's first round of each cell, named after the cell and peer.
	ProfileDir string
}

// Cell is one protocol at one number of callers, every peer's runs.
type Cell struct {
	Protocol Protocol `json:"protocol"`
	Callers  int      `json:"callers"`
	// Runs holds, per peer (in CompareOptions.Peers' order), one result
	// per round; empty for a peer without that protocol.
	Runs [][]LoadResult `json:"runs"`
}

// Comparison is the side-by-side result.
type Comparison struct {
	Peers    []string      `json:"peers"`
	Rounds   int           `json:"rounds"`
	Duration time.Duration `json:"duration_ns"`
	Cells    []Cell        `json:"cells"`
}

// Compare runs the rate-limit load on every peer, per protocol and number
// of callers, in alternating rounds. The first failed run ends it.
func Compare(ctx context.Context, o CompareOptions) (*Comparison, error) {
	if len(o.Peers) == 0 || len(o.Callers) == 0 || o.Rounds < 1 || o.Duration <= 0 {
		return nil, fmt.Errorf("%w: the comparison needs peers, callers, at least one round and a positive duration", ErrOptions)
	}
	c := &Comparison{Rounds: o.Rounds, Duration: o.Duration}
	for _, p := range o.Peers {
		c.Peers = append(c.Peers, p.Name)
	}
	for _, proto := range []Protocol{GRPC, HTTPJSON} {
		for _, n := range o.Callers {
			cell := Cell{Protocol: proto, Callers: n, Runs: make([][]LoadResult, len(o.Peers))}
			for r := range o.Rounds {
				for _, i := range turns(len(o.Peers), r) {
					stop, err := o.profile(r, proto, n, o.Peers[i])
					if err != nil {
						return nil, err
					}
					res, ok, err := runPeer(ctx, o.Peers[i], proto, n, o.Duration)
					if err := errors.Join(err, stop()); err != nil {
						return nil, err
					}
					if !ok {
						continue
					}
					cell.Runs[i] = append(cell.Runs[i], res)
					if o.Progress != nil {
						o.Progress("%s %d callers, round %d, %s: %.0f/s, p99 %s", proto, n, r+1, o.Peers[i].Name, res.PerSecond(), ms(res.P99))
					}
				}
			}
			c.Cells = append(c.Cells, cell)
		}
	}
	return c, nil
}

// profile starts a CPU profile of round r of the cell on peer p, if the
// options ask for it, and returns how to stop it.
func (o CompareOptions) profile(r int, proto Protocol, callers int, p Peer) (func() error, error) {
	if o.ProfileDir == "" || r > 0 {
		return func() error { return nil }, nil
	}
	slug := strings.NewReplacer(" ", "-", ",", "", ":", "-", "/", "-").Replace(strings.ToLower(fmt.Sprintf("%s-%d-%s", proto, callers, p.Name)))
	f, err := os.Create(filepath.Join(o.ProfileDir, slug+".pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// turns is the order the peers run in round r: forwards in even rounds,
// backwards in odd ones, so no peer always runs right after another.
func turns(n, r int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if r%2 == 1 {
		slices.Reverse(order)
	}
	return order
}

// runPeer runs one load on p; ok is false when p has no address for proto.
func runPeer(ctx context.Context, p Peer, proto Protocol, callers int, d time.Duration) (LoadResult, bool, error) {
	switch {
	case proto == GRPC && p.GRPCAddr != "":
		res, err := grpcLoad(ctx, p, callers, d)
		return res, true, err
	case proto == HTTPJSON && p.HTTPURL != "":
		res, err := httpLoad(ctx, p, callers, d)
		return res, true, err
	}
	return LoadResult{}, false, nil
}

// median returns the median of the runs' throughput, of their p99 and of
// their CPU time per call.
func median(runs []LoadResult) (perSecond float64, p99, cpu time.Duration) {
	rates := make([]float64, len(runs))
	p99s := make([]time.Duration, len(runs))
	cpus := make([]time.Duration, len(runs))
	for i, r := range runs {
		rates[i], p99s[i], cpus[i] = r.PerSecond(), r.P99, r.CPUPerCall()
	}
	slices.Sort(rates)
	slices.Sort(p99s)
	slices.Sort(cpus)
	return rates[len(rates)/2], p99s[len(p99s)/2], cpus[len(cpus)/2]
}

// Table renders the comparison: per cell, each peer's median throughput
// with its ratio to the first peer, and its median p99.
func (c *Comparison) Table() Table {
	t := Table{
		Title:   "Rate-limit load, side by side: one key, hits 1, closed loop (GetRateLimits)",
		Columns: []string{"path", "callers"},
		Notes: []string{
			fmt.Sprintf("median of %d alternating rounds of %s per cell; × is the ratio to %s's median", c.Rounds, c.Duration, c.Peers[0]),
			"gRPC: one shared grpc-go connection; HTTP JSON: one HTTP/1.1 connection per caller",
			"cpu/call: this process's CPU time per call, the load generator's included (and the server's, when it runs in this process)",
		},
	}
	for _, p := range c.Peers {
		t.Columns = append(t.Columns, p, "p99", "cpu/call")
	}
	for _, cell := range c.Cells {
		row := []string{string(cell.Protocol), strconv.Itoa(cell.Callers)}
		var base float64
		if len(cell.Runs[0]) > 0 {
			base, _, _ = median(cell.Runs[0])
		}
		for _, runs := range cell.Runs {
			if len(runs) == 0 {
				row = append(row, "-", "-", "-")
				continue
			}
			rate, p99, cpu := median(runs)
			s := fmt.Sprintf("%.1fk/s", rate/1000)
			if base > 0 {
				s += fmt.Sprintf(" (%.2f×)", rate/base)
			}
			row = append(row, s, ms(p99), us(cpu))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
