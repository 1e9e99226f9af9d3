package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"governor.dev/governor/internal/clientconn"
)

// Options say where governord is and how large the workloads are.
type Options struct {
	// Remote, when set, is a running governord to use; nil starts one in
	// this process for each scenario.
	Remote *clientconn.Config
	// AdminKey is the remote governord's admin key; the scenarios make
	// their tenants, pools and budgets under the root with it.
	AdminKey string
	// MetricsURL is the remote governord's metrics endpoint; the flooded
	// and noisy neighbour scenarios read the queue's depth there.
	MetricsURL string
	// PostgresURL, when set, adds PostgreSQL to the restart and overhead
	// scenarios. Each run uses names of its own in it.
	PostgresURL string
	// Dir holds the SQLite files of the restart and overhead scenarios.
	Dir string
	// Governord is the command that runs governord as a process of its
	// own, for the restart and failover scenarios: the program and its
	// first arguments.
	// Its environment gets GovernordEnv=1. Empty: this executable.
	Governord []string
	// Sizes are the workloads' parameters; the zero value is Full().
	Sizes Sizes
	// Progress receives a line as each scenario starts; nil: none.
	Progress func(format string, args ...any)
}

// Scenario is one workload of the benchmark.
type Scenario struct {
	Name  string // as -run selects it
	About string // one line, for -list
	run   func(ctx context.Context, e *env) (Result, error)
}

// Scenarios returns every scenario, in the order they run.
func Scenarios() []Scenario {
	return []Scenario{
		{"fanout", "runaway fan-out: a task tree against a budget and a pool", runFanout},
		{"noisy", "noisy neighbour: tenant B's wait behind tenant A's flood, fair queue vs FIFO", runNoisy},
		{"retry", "retry storm: nested retry loops against a down service, with a retry budget", runRetry},
		{"capacity", "capacity drop: fixed limit vs adaptive when the service loses capacity", runCapacity},
		{"crash", "worker crash: a dead worker's slots handed on at its TTL, its late releases refused", runCrash},
		{"flooded", "flooded tenants: the first grants of a pool shared 3/3/3 under a flood", runFlooded},
		{"restart", "governord restart: SIGKILL mid-run, nothing acknowledged lost", runRestart},
		{"failover", "cluster failover: the leader of three governord processes killed (SIGKILL) mid-run, nothing acknowledged lost", runFailover},
		{"overhead", "overhead: per-call time and throughput on memory, SQLite and PostgreSQL", runOverhead},
	}
}

// Report is one scenario's outcome: its result, or why it did not run.
type Report struct {
	Scenario string        `json:"scenario"`
	Result   Result        `json:"result,omitempty"`
	Error    string        `json:"error,omitempty"`
	Skipped  string        `json:"skipped,omitempty"` // why it cannot run against -addr
	Took     time.Duration `json:"took_ns"`
}

// Run runs the scenarios whose names match only (nil: all), one after the
// other, and returns a report for each. A scenario that fails does not stop
// the others.
func Run(ctx context.Context, opts Options, only *regexp.Regexp) ([]Report, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	e := &env{Options: opts}
	if e.Sizes == (Sizes{}) {
		e.Sizes = Full()
	}
	if e.Progress == nil {
		e.Progress = func(string, ...any) {}
	}
	var out []Report
	for _, sc := range Scenarios() {
		if only != nil && !only.MatchString(sc.Name) {
			continue
		}
		e.Progress("%s: %s", sc.Name, sc.About)
		start := time.Now()
		res, err := sc.run(ctx, e)
		r := Report{Scenario: sc.Name, Result: res, Took: time.Since(start)}
		switch {
		case errors.Is(err, ErrNeedsOwnGovernord):
			r.Skipped = err.Error()
		case err != nil:
			r.Error = err.Error()
		}
		out = append(out, r)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

func (o Options) check() error {
	var errs []error
	if o.Remote != nil && o.AdminKey == "" {
		errs = append(errs, fmt.Errorf("%w: a remote governord needs its admin key (-admin-key or GOVERNOR_ADMIN_KEY): the scenarios make tenants and pools under the root", ErrOptions))
	}
	if o.Dir == "" {
		errs = append(errs, fmt.Errorf("%w: a directory for SQLite files is required", ErrOptions))
	} else if fi, err := os.Stat(o.Dir); err != nil || !fi.IsDir() {
		errs = append(errs, fmt.Errorf("%w: %q is not a directory: SQLite files go there", ErrOptions, o.Dir))
	}
	if o.Sizes != (Sizes{}) {
		errs = append(errs, o.Sizes.check())
	}
	return errors.Join(errs...)
}

// env is what scenarios share: the options and how to reach governord.
type env struct {
	Options
}

// governord returns the governord a scenario runs against: a new one in
// this process as s says, or the remote one when s asks for nothing of its
// own.
func (e *env) governord(ctx context.Context, s settings) (*target, error) {
	if e.Remote == nil {
		return startInProcess(ctx, s)
	}
	if s.databaseURL != "" || len(s.rootLimits) > 0 || len(s.adaptive) > 0 {
		return nil, ErrNeedsOwnGovernord
	}
	t, err := newTarget(*e.Remote, e.AdminKey)
	if err != nil {
		return nil, err
	}
	t.metricsURL = e.MetricsURL
	return t, nil
}
