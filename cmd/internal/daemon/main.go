package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"governor.dev/governor/cmd/internal/config"
)

// Exit codes of governord.
const (
	ExitOK      = 0 // stopped by a signal, everything acknowledged is on record
	ExitFailure = 1 // stopped by a failure: a failed commit, a listener, a record that does not open
	ExitUsage   = 2 // a flag or the configuration has mistakes; nothing was started
)

const usage = `Usage: governord [-config FILE] [-listen ADDR] [-metrics-listen ADDR] [-check | -health]

Without -config, governord starts in development mode: loopback only, the
record in governor.db in the working directory, and an admin key and a demo
tenant key generated once into %s there, printed with commands to try.

With -config FILE it runs as that file says (governor.example.yaml shows
every key). SIGINT or SIGTERM stops it gracefully. It exits 0 after a clean
stop, 1 after a failure (a failed commit to the record: restart it), and 2
when a flag or the configuration has mistakes, the TLS certificate cannot be
used, or an address cannot be listened on. With -check it only checks the
configuration and its TLS pair, and exits 0 or 2. With -health it asks the
governord at the configuration's listen address whether it serves, and
exits 0 or 1.

`

// Main is governord: it reads the flags and the configuration, runs the
// daemon until ctx ends (a signal) or the daemon fails, and returns the exit
// code. stdout receives development mode's instructions; stderr the log and
// every message about flags and configuration.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("governord", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprintf(stderr, usage, KeysFile)
		fl.PrintDefaults()
	}
	configPath := fl.String("config", "", "the configuration `FILE`; without it, development mode")
	listen := fl.String("listen", "", "the API's `ADDR` (host:port), in place of the configuration's listen")
	metricsListen := fl.String("metrics-listen", "", "the metrics endpoint's `ADDR` (host:port), in place of the configuration's metrics_listen; off disables it")
	check := fl.Bool("check", false, "check the configuration and its TLS pair, then exit: 0 when governord would start with them, 2 with every mistake")
	health := fl.Bool("health", false, "ask the governord the configuration describes whether it serves, then exit: 0 when it does, 1 when not (a container's health check)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "governord: unexpected argument %q: every setting is a flag or in the configuration file (governord -h)\n", fl.Arg(0))
		return ExitUsage
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["config"] && *configPath == "" {
		fmt.Fprintln(stderr, "governord: -config needs a file name; leave the flag out for development mode")
		return ExitUsage
	}
	if *check && *configPath == "" {
		fmt.Fprintln(stderr, "governord: -check needs -config FILE: development mode has no file to check")
		return ExitUsage
	}
	cfg, keys, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "governord: %v\n", err)
		return ExitUsage
	}
	if set["listen"] {
		cfg.Listen = *listen
	}
	if set["metrics-listen"] {
		cfg.MetricsListen = *metricsListen
		if cfg.MetricsListen == "off" {
			cfg.MetricsListen = ""
		}
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "governord: the configuration has mistakes; nothing was started:\n%v\n", err)
		return ExitUsage
	}
	if *check {
		return checkOnly(cfg, *configPath, stdout, stderr)
	}
	if *health {
		if err := probe(ctx, cfg); err != nil {
			fmt.Fprintf(stderr, "governord: %v\n", err)
			return ExitFailure
		}
		return ExitOK
	}
	d, err := Start(ctx, cfg, Options{LogOutput: stderr, BeforeOpen: keys.save})
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "governord: stopped before serving: %v\n", err)
		return ExitOK
	case errors.Is(err, ErrAddress), errors.Is(err, ErrCertificate), errors.Is(err, ErrPlaintext):
		fmt.Fprintf(stderr, "governord: %v; nothing was started\n", err)
		return ExitUsage
	case err != nil:
		fmt.Fprintf(stderr, "governord: %v\n", err)
		return ExitFailure
	}
	if *configPath == "" {
		printWelcome(stdout, cfg, keys, d)
	}
	if err := d.Wait(ctx); err != nil {
		fmt.Fprintf(stderr, "governord: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

// checkOnly is -check: the configuration was valid; the TLS pair, if any,
// must load too. Nothing is bound, opened or written.
func checkOnly(cfg *config.Config, path string, stdout, stderr io.Writer) int {
	if cfg.TLS.Enabled() {
		if _, err := loadCertificate(cfg.TLS.CertFile, cfg.TLS.KeyFile, newLogger(cfg.Log, stderr), time.Now); err != nil {
			fmt.Fprintf(stderr, "governord: %v\n", err)
			return ExitUsage
		}
	}
	fmt.Fprintf(stdout, "governord: %s is a valid configuration\n", path)
	return ExitOK
}

// loadConfig reads the file at path, or builds development mode's
// configuration in the working directory when path is empty.
func loadConfig(path string) (*config.Config, DevKeys, error) {
	if path == "" {
		dir, err := os.Getwd()
		if err != nil {
			return nil, DevKeys{}, fmt.Errorf("development mode needs the working directory: %w", err)
		}
		return devConfig(dir)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, DevKeys{}, fmt.Errorf("-config %s: no such file (governor.example.yaml shows every key)", path)
	case err != nil:
		return nil, DevKeys{}, fmt.Errorf("-config %s: %w", path, err)
	case fi.IsDir():
		return nil, DevKeys{}, fmt.Errorf("-config %s: a directory, not a configuration file", path)
	}
	cfg, err := config.Load(path)
	if err != nil {
		var mistakes *config.Error
		if errors.As(err, &mistakes) {
			return nil, DevKeys{}, fmt.Errorf("the configuration has mistakes; nothing was started:\n%w", err)
		}
		return nil, DevKeys{}, err
	}
	return cfg, DevKeys{}, nil
}
