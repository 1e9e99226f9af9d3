package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"governor.dev/governor/internal/clientconn"
)

// Exit codes of govbench.
const (
	ExitOK      = 0 // every scenario ran
	ExitFailure = 1 // a scenario failed; the others still ran
	ExitUsage   = 2 // a flag is wrong; nothing ran
)

const usage = `Usage: govbench [flags]

Runs the benchmark's scenarios one after another and prints one table per
scenario. By default each scenario starts governord inside this process;
with -addr they use a running governord instead (and the scenarios that must
configure, kill or compare governords are skipped).

`

// Main is govbench: it reads the flags, runs the scenarios and prints their
// tables (or JSON) to stdout, progress and errors to stderr, and returns the
// exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("govbench", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, usage)
		fl.PrintDefaults()
	}
	addr := fl.String("addr", "", "a running governord's `host:port`; TLS and the CA file come from GOVERNOR_TLS and GOVERNOR_CA_FILE")
	adminKey := fl.String("admin-key", os.Getenv("GOVERNOR_ADMIN_KEY"), "the admin `key` of the governord at -addr (default $GOVERNOR_ADMIN_KEY)")
	metricsURL := fl.String("metrics-url", "", "the `URL` of the metrics of the governord at -addr, for the scenarios that wait for a queue")
	pgURL := fl.String("database-url", "", "a PostgreSQL `URL` (postgres://...) to add to the restart and overhead scenarios; a throwaway database is best")
	run := fl.String("run", "", "run only the scenarios whose names match this `regexp` (-list shows them)")
	asJSON := fl.Bool("json", false, "print the results as JSON instead of tables")
	list := fl.Bool("list", false, "list the scenarios and exit")
	var cmp CompareFlags
	fl.StringVar(&cmp.GRPCAddr, "compare", "", "instead of the scenarios, run the rate-limit load side by side on the Gubernator-compatible gRPC API at this `host:port` and on governord (memory and SQLite, in this process)")
	fl.StringVar(&cmp.HTTPURL, "compare-http", "", "with -compare, also the HTTP JSON load on the peer's gateway at this base `URL` (http://host:port)")
	fl.StringVar(&cmp.Key, "compare-key", os.Getenv("GOVERNOR_COMPARE_KEY"), "with -compare, the `key` sent to the peer as Authorization: Bearer (default $GOVERNOR_COMPARE_KEY)")
	fl.StringVar(&cmp.Callers, "compare-callers", "16,64", "with -compare, comma-separated numbers of concurrent `callers`")
	fl.IntVar(&cmp.Rounds, "compare-rounds", 2, "with -compare, how many alternating `rounds` each cell runs")
	fl.DurationVar(&cmp.Duration, "compare-duration", 8*time.Second, "with -compare, how long each run lasts")
	fl.StringVar(&cmp.SVG, "compare-svg", "", "with -compare, also draw the comparison as an SVG chart into this `file`")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "govbench: unexpected argument %q: every setting is a flag (govbench -h)\n", fl.Arg(0))
		return ExitUsage
	}
	if *list {
		for _, sc := range Scenarios() {
			fmt.Fprintf(stdout, "%-10s %s\n", sc.Name, sc.About)
		}
		return ExitOK
	}
	switch {
	case cmp.GRPCAddr == "" && cmp.HTTPURL != "":
		fmt.Fprintf(stderr, "govbench: -compare-http needs -compare, the peer's gRPC address\n")
		return ExitUsage
	case cmp.GRPCAddr != "" && *addr != "":
		fmt.Fprintf(stderr, "govbench: -compare starts its own governords to compare with; leave -addr out\n")
		return ExitUsage
	}
	opts, only, err := cliOptions(*addr, *adminKey, *metricsURL, *pgURL, *run)
	if err != nil {
		fmt.Fprintf(stderr, "govbench: %v\n", err)
		return ExitUsage
	}
	dir, err := os.MkdirTemp("", "govbench-")
	if err != nil {
		fmt.Fprintf(stderr, "govbench: %v\n", err)
		return ExitFailure
	}
	defer os.RemoveAll(dir)
	opts.Dir = dir
	if cmp.GRPCAddr != "" {
		return runCompare(ctx, cmp, dir, *asJSON, stdout, stderr)
	}
	opts.Progress = func(format string, a ...any) { fmt.Fprintf(stderr, "govbench: "+format+"\n", a...) }
	reports, err := Run(ctx, opts, only)
	if err != nil && len(reports) == 0 {
		fmt.Fprintf(stderr, "govbench: %v\n", err)
		return ExitUsage
	}
	return print(reports, *asJSON, stdout, stderr)
}

// cliOptions checks the flags and turns them into Options.
func cliOptions(addr, adminKey, metricsURL, pgURL, run string) (Options, *regexp.Regexp, error) {
	var opts Options
	var errs []error
	if addr != "" {
		conn, err := clientconn.FromEnv()
		if err != nil {
			errs = append(errs, err)
		}
		conn.Addr = addr
		if _, err := conn.BaseURL(); err != nil {
			errs = append(errs, fmt.Errorf("-addr: %w", err))
		}
		opts.Remote, opts.AdminKey, opts.MetricsURL = &conn, adminKey, metricsURL
	} else if metricsURL != "" {
		errs = append(errs, fmt.Errorf("%w: -metrics-url is for a governord at -addr; without -addr govbench starts its own", ErrOptions))
	}
	if pgURL != "" && !strings.HasPrefix(pgURL, "postgres://") && !strings.HasPrefix(pgURL, "postgresql://") {
		errs = append(errs, fmt.Errorf("%w: -database-url must be a PostgreSQL URL starting with postgres:// or postgresql://", ErrOptions))
	}
	opts.PostgresURL = pgURL
	var only *regexp.Regexp
	if run != "" {
		var err error
		if only, err = regexp.Compile(run); err != nil {
			errs = append(errs, fmt.Errorf("%w: -run %q is not a regular expression: %w", ErrOptions, run, err))
		}
	}
	return opts, only, errors.Join(errs...)
}

// print writes the reports as tables or JSON and returns the exit code.
func print(reports []Report, asJSON bool, stdout, stderr io.Writer) int {
	code := ExitOK
	for _, r := range reports {
		switch {
		case r.Error != "":
			code = ExitFailure
			fmt.Fprintf(stderr, "govbench: %s failed: %s\n", r.Scenario, r.Error)
		case r.Skipped != "":
			fmt.Fprintf(stderr, "govbench: %s skipped: %s\n", r.Scenario, r.Skipped)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			fmt.Fprintf(stderr, "govbench: %v\n", err)
			return ExitFailure
		}
		return code
	}
	for _, r := range reports {
		if r.Result == nil {
			continue
		}
		if err := r.Result.Table().WriteText(stdout); err != nil {
			fmt.Fprintf(stderr, "govbench: %v\n", err)
			return ExitFailure
		}
	}
	return code
}
