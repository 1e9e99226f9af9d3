package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"governor.dev/governor/cmd/internal/adaptive"
	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
	"governor.dev/governor/cmd/internal/gubernator"
	"governor.dev/governor/cmd/internal/metrics"
	"governor.dev/governor/cmd/internal/server"
)

// DefaultShutdownGrace is how long a graceful stop lets calls in flight
// finish when Options.ShutdownGrace is zero.
const DefaultShutdownGrace = 10 * time.Second

// Options tune a daemon. The zero value is what governord runs with.
type Options struct {
	// Logger receives the structured log; nil builds one from the
	// configuration's log section, writing to LogOutput.
	Logger *slog.Logger
	// LogOutput is where a built logger writes; nil is standard error.
	LogOutput io.Writer
	// Clock is the engine's clock; nil is the wall clock.
	Clock engine.Clock
	// ShutdownGrace bounds how long Stop lets calls in flight finish before
	// it fails those still running; zero is DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// BodyTimeout bounds how long a request may take to send its body
	// after its headers; zero is DefaultBodyTimeout.
	BodyTimeout time.Duration
	// BeforeOpen, if set, runs once the listeners are bound and before the
	// record is opened; an error stops the start with nothing opened. It is
	// where a start that creates files (development mode's keys) creates
	// them, so that a busy port leaves nothing behind.
	BeforeOpen func() error
	// Tracing, if set, traces the API's calls instead of the configuration's
	// tracing section, which is then ignored; the caller owns it.
	Tracing trace.TracerProvider
}

// Daemon is a running governord: the record, the engine rebuilt from it,
// the API and metrics listeners and the background duties. Create it with
// Start; its methods are safe for concurrent use.
type Daemon struct {
	cfg         *config.Config
	log         *slog.Logger
	grace       time.Duration
	bodyTimeout time.Duration

	store   *durable.Store       // nil on a cluster member
	member  *member              // nil unless cfg.Cluster is set
	tenants map[string]engine.ID // fixed by Start, read without a lock; a member's are in member
	metrics *metrics.Metrics
	ctrl    *adaptive.Controller
	api     *server.Server
	guber   *gubernator.Service // nil unless the Gubernator API is enabled
	reaper  *reaper
	tracer  *sdktrace.TracerProvider // built from the tracing section, shut down at stop; nil unless configured
	tracing trace.TracerProvider     // what the APIs trace with: Options.Tracing or tracer; nil traces nothing

	apiHTTP     *http.Server
	grpcAPI     *grpc.Server // grpc-go's share of the API port; nil unless it has one
	apiAddr     net.Addr
	tls         bool
	metricsHTTP *http.Server // nil when metrics are off
	metricsAddr net.Addr     // nil when metrics are off
	serving     sync.WaitGroup
	serveErr    chan error // a listener that stopped by itself; buffered

	stopOnce sync.Once
	stopping chan struct{}   // closed by Stop
	stopCtx  context.Context // Stop's context, set before stopping is closed
	done     chan struct{}   // closed once everything has stopped
	err      error           // why it stopped, set before done is closed
}

// Start checks the TLS pair, binds the listeners (a busy address fails here,
// with nothing created), opens the record named by cfg, rebuilds the engine from it, seeds it
// from the configuration (see reconcile.go: the file seeds, the record
// decides afterwards), starts the adaptive controllers and the reaper, and
// serves the API (and metrics, unless they are off). ctx bounds the start
// only; the daemon runs until Stop, or until a commit to the record fails.
func Start(ctx context.Context, cfg *config.Config, opts Options) (*Daemon, error) {
	if err := checkPlaintext(cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Daemon{
		cfg: cfg, log: opts.Logger, grace: opts.ShutdownGrace, bodyTimeout: opts.BodyTimeout, tracing: opts.Tracing,
		serveErr: make(chan error, 3), stopping: make(chan struct{}), done: make(chan struct{}),
	}
	if d.log == nil {
		out := opts.LogOutput
		if out == nil {
			out = os.Stderr
		}
		d.log = newLogger(cfg.Log, out)
	}
	if d.grace <= 0 {
		d.grace = DefaultShutdownGrace
	}
	if d.bodyTimeout <= 0 {
		d.bodyTimeout = DefaultBodyTimeout
	}
	var certs *certificate
	if cfg.TLS.Enabled() {
		var err error
		if certs, err = loadCertificate(cfg.TLS.CertFile, cfg.TLS.KeyFile, d.log, time.Now); err != nil {
			return nil, err
		}
	}
	lns, err := bind(cfg.Listen, cfg.MetricsListen)
	if err != nil {
		return nil, err
	}
	if opts.BeforeOpen != nil {
		if err := opts.BeforeOpen(); err != nil {
			lns.close()
			return nil, err
		}
	}
	open := d.open
	if cfg.Cluster.Enabled() {
		open = d.openMember
	}
	if err := open(ctx, opts.Clock); err != nil {
		lns.close()
		return nil, err
	}
	if err := d.serve(lns, certs); err != nil {
		lns.close()
		d.stopDuties()
		d.api.Close()
		d.stopTracing()
		return nil, errors.Join(err, d.closeRecord(context.WithoutCancel(ctx)))
	}
	if d.member == nil {
		d.reaper = startReaper(d.store, cfg.ReapInterval, d.log)
	}
	go d.supervise()
	d.log.Info("serving", "api", d.URL(), "metrics", d.metricsURL(), "record", redactURL(cfg.DatabaseURL),
		"tenants", len(d.tenants), "adaptive_classes", len(cfg.Adaptive))
	return d, nil
}

// checkPlaintext refuses a plain-text API on an address beyond loopback
// unless the configuration allows it. Validate says the same; the daemon
// checks again so that no path around Validate can expose keys.
func checkPlaintext(cfg *config.Config) error {
	if config.RequiresTLS(cfg.Listen) && !cfg.TLS.Enabled() && !cfg.AllowPlaintext {
		return fmt.Errorf("%w; listen is %q", ErrPlaintext, cfg.Listen)
	}
	return nil
}

// open opens the record, seeds it, and builds the metrics, the controllers
// and the API on it. On error nothing is left open.
func (d *Daemon) open(ctx context.Context, clock engine.Clock) error {
	if clock == nil {
		clock = wallClock{}
	}
	cfg := d.cfg
	every := uint64(cfg.SnapshotEvery)
	if every == 0 {
		every = math.MaxUint64 // the configuration's "never"
	}
	hooks := &hooks{}
	st, err := durable.Open(ctx, durable.Options{
		URL:              cfg.DatabaseURL,
		Clock:            clock,
		Settings:         ptr(engineSettings(cfg)),
		SnapshotEvery:    every,
		SnapshotInterval: cfg.SnapshotInterval,
		SnapshotBytes:    cfg.SnapshotBytes,
		Writer: eventlog.WriterOptions{
			MaxBacklog: cfg.Commit.MaxBacklog,
			MaxBatch:   cfg.Commit.MaxBatch,
			OnCommit:   hooks.commit,
			Logger:     d.log,
		},
		Committed: hooks.committed,
		Logger:    d.log,
	})
	if err != nil {
		return fmt.Errorf("open the record (%s): %w", redactURL(cfg.DatabaseURL), err)
	}
	d.store = st
	d.metrics = metrics.New(st)
	d.ctrl = adaptive.New(st, adaptive.FromConfig(cfg.Adaptive), d.log)
	hooks.set(&observers{metrics: d.metrics, ctrl: d.ctrl})
	if d.tenants, err = reconcile(ctx, st, cfg, d.log); err != nil {
		return errors.Join(fmt.Errorf("seed the record from the configuration: %w", err), st.Close(ctx))
	}
	if err := st.Engine.SetBounds(cfg.EngineBounds(d.tenants)); err != nil {
		return errors.Join(fmt.Errorf("set the tenants' bounds: %w", err), st.Close(ctx))
	}
	if err := d.buildAPI(ctx, server.Single(st)); err != nil {
		return errors.Join(err, st.Close(ctx))
	}
	// Nothing makes events between the API's first look at the tree and
	// this: the controllers start below, the reaper and the listeners later.
	hooks.set(&observers{metrics: d.metrics, ctrl: d.ctrl, api: d.api})
	d.ctrl.Start()
	return nil
}

// engineSettings are the engine's settings the configuration gives.
func engineSettings(cfg *config.Config) engine.Settings {
	return engine.Settings{
		TombstoneTTL:    cfg.Retention.Tombstones,
		NodeRetention:   cfg.Retention.Nodes,
		MaxScheduleWait: cfg.MaxScheduleWait,
		KeyIdle:         cfg.Gubernator.IdleTTL,
	}
}

func ptr[T any](v T) *T { return &v }

// buildAPI builds the tracer, unless the caller gave one, and the API
// served from backend. On error nothing is left running.
func (d *Daemon) buildAPI(ctx context.Context, backend server.Backend) error {
	cfg := d.cfg
	var err error
	if d.tracing == nil {
		if d.tracer, err = newTracer(ctx, cfg.Tracing, d.log); err != nil {
			return err
		}
		if d.tracer != nil {
			d.tracing = d.tracer
		}
	}
	d.api, err = server.New(server.Options{
		Backend: backend,
		Keys:    cfg.KeyMatcher(),
		Tenants: d.tenant,
		TTL: server.TTLBounds{
			Default: cfg.Sessions.DefaultTTL,
			Min:     cfg.Sessions.MinTTL,
			Max:     cfg.Sessions.MaxTTL,
		},
		Logger:  d.log,
		Observe: d.metrics.ObserveCall,
		Reflect: d.reflected(),
		Tracing: d.tracing,
	})
	if err != nil {
		d.stopTracing()
		return fmt.Errorf("build the API: %w", err)
	}
	return nil
}

// tenant maps a configured tenant's name to its node.
func (d *Daemon) tenant(name string) (engine.ID, bool) {
	if d.member != nil {
		return d.member.tenant(name)
	}
	id, ok := d.tenants[name]
	return id, ok
}

// Addr is the API's bound address: the configured one, with the port the
// system chose for port 0.
func (d *Daemon) Addr() net.Addr { return d.apiAddr }

// URL is the API's base URL, http:// or https://.
func (d *Daemon) URL() string {
	if d.tls {
		return "https://" + d.apiAddr.String()
	}
	return "http://" + d.apiAddr.String()
}

// MetricsAddr is the metrics endpoint's bound address; nil when metrics are
// off.
func (d *Daemon) MetricsAddr() net.Addr { return d.metricsAddr }

func (d *Daemon) metricsURL() string {
	if d.metricsAddr == nil {
		return "off"
	}
	return "http://" + d.metricsAddr.String() + "/metrics"
}

// Done is closed once the daemon has stopped, by Stop or because a commit to
// the record failed.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Err says why the daemon stopped once Done is closed: nil after a clean
// Stop, an error wrapping ErrRecordFailed after a failed commit.
func (d *Daemon) Err() error {
	select {
	case <-d.done:
		return d.err
	default:
		return nil
	}
}

// Stop stops gracefully: no new connections or calls, the calls in flight
// finish (those still running after the grace period fail with
// Unavailable), the controllers and the reaper stop, and the record commits
// what is pending and closes. It returns why the daemon stopped (see Err),
// or ctx's error if ctx ends first, in which case stopping goes on. It may
// be called more than once and after the daemon stopped by itself.
func (d *Daemon) Stop(ctx context.Context) error {
	d.stopOnce.Do(func() {
		d.stopCtx = ctx
		close(d.stopping)
	})
	select {
	case <-d.done:
		return d.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait returns when the daemon stops by itself (a failed commit), with why,
// or, once ctx ends, stops it gracefully and returns Stop's answer.
func (d *Daemon) Wait(ctx context.Context) error {
	select {
	case <-d.done:
		return d.err
	case <-ctx.Done():
		return d.Stop(context.WithoutCancel(ctx))
	}
}

// Run starts a daemon and serves until ctx ends (then stops gracefully) or
// until a commit to the record fails, and returns why it stopped: nil after
// a clean stop.
func Run(ctx context.Context, cfg *config.Config, opts Options) error {
	d, err := Start(ctx, cfg, opts)
	if err != nil {
		return err
	}
	return d.Wait(ctx)
}
