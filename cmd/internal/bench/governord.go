package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/daemon"
	"governor.dev/governor/internal/clientconn"
)

// reapInterval is how often a governord the benchmark starts ends lapsed
// sessions without waiting for a call to notice them. It bounds how late
// after a dead worker's TTL its capacity is handed on.
const reapInterval = 20 * time.Millisecond

// target is one governord the scenarios talk to: one the benchmark started
// in this process, or one at -addr.
type target struct {
	conn       clientconn.Config // where it is; HTTPClient is shared by every session
	adminKey   string
	metricsURL string                      // "" when unknown
	stop       func(context.Context) error // nil for a governord at -addr
	runID      string                      // makes this run's names unique
}

// settings is what a scenario asks of a governord it starts: the record, the
// root's caps and the adaptive controllers. The zero value is memory, no caps.
type settings struct {
	databaseURL string
	rootLimits  map[string]int64
	adaptive    map[string]config.Adaptive
}

// configYAML is the configuration of a governord the benchmark starts:
// loopback on listen, metrics on metrics ("off" for none), no tenants (the
// scenarios make their own under the root with the admin key).
func configYAML(adminKey, listen, metrics string, s settings) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %q\nmetrics_listen: %q\ndatabase_url: %q\nadmin_key: %q\n", listen, metrics, s.databaseURL, adminKey)
	fmt.Fprintf(&b, "reap_interval: %s\nsessions: {min_ttl: 1s, default_ttl: 30s, max_ttl: 1h}\nlog: {format: json, level: info}\n", reapInterval)
	if len(s.rootLimits) > 0 {
		b.WriteString("root:\n  limits:\n")
		for class, n := range s.rootLimits {
			fmt.Fprintf(&b, "    %s: %d\n", class, n)
		}
	}
	if len(s.adaptive) > 0 {
		b.WriteString("adaptive:\n")
		for class, a := range s.adaptive {
			fmt.Fprintf(&b, "  %s: {initial: %d, min: %d, max: %d, target_p95: %s, max_overload_share: %g, interval: %s, min_samples: %d}\n",
				class, a.Initial, a.Min, a.Max, a.TargetP95, a.MaxOverloadShare, a.Interval, a.MinSamples)
		}
	}
	return b.String()
}

// startInProcess starts governord inside this process as s says.
func startInProcess(ctx context.Context, s settings) (*target, error) {
	key := randomHex(16)
	cfg, err := config.Parse([]byte(configYAML(key, "127.0.0.1:0", "127.0.0.1:0", s)), "govbench", func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, fmt.Errorf("the benchmark's governord configuration: %w", err)
	}
	d, err := daemon.Start(ctx, cfg, daemon.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("start governord: %w", err)
	}
	t, err := newTarget(clientconn.Config{Addr: d.URL()}, key)
	if err != nil {
		return nil, errors.Join(err, d.Stop(context.WithoutCancel(ctx)))
	}
	t.metricsURL = "http://" + d.MetricsAddr().String() + "/metrics"
	t.stop = d.Stop
	return t, nil
}

// newTarget returns the governord conn names, with one HTTP/2 client shared
// by every session. A malformed address or CA file is an error.
func newTarget(conn clientconn.Config, adminKey string) (*target, error) {
	hc, err := conn.Client()
	if err != nil {
		return nil, err
	}
	if tr, ok := hc.Transport.(*http.Transport); ok {
		tr.MaxIdleConnsPerHost = 1024
	}
	conn.HTTPClient = hc
	return &target{conn: conn, adminKey: adminKey, runID: randomHex(4)}, nil
}

// close stops a governord the benchmark started; one at -addr stays.
func (t *target) close() error {
	if t.conn.HTTPClient != nil {
		t.conn.HTTPClient.CloseIdleConnections()
	}
	if t.stop == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return t.stop(ctx)
}

// name returns a node or class name unique to this run of the benchmark.
func (t *target) name(parts ...string) string {
	return strings.Join(append(parts, t.runID), "-")
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// StartRateGovernord starts governord inside this process with the
// Gubernator-compatible API on, kept under a tenant of its own, on the
// record at databaseURL ("" for memory only), and returns it as a peer of
// the comparison named name, and how to stop it.
func StartRateGovernord(ctx context.Context, name, databaseURL string) (Peer, func(context.Context) error, error) {
	key := randomHex(16)
	yaml := configYAML(randomHex(16), "127.0.0.1:0", "off", settings{databaseURL: databaseURL}) +
		fmt.Sprintf("tenants:\n  - {name: bench, api_key: %q}\ngubernator: {enabled: true, tenant: bench}\n", key)
	cfg, err := config.Parse([]byte(yaml), "govbench", func(string) (string, bool) { return "", false })
	if err != nil {
		return Peer{}, nil, fmt.Errorf("the benchmark's governord configuration: %w", err)
	}
	d, err := daemon.Start(ctx, cfg, daemon.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return Peer{}, nil, fmt.Errorf("start governord: %w", err)
	}
	return Peer{Name: name, GRPCAddr: d.Addr().String(), HTTPURL: d.URL(), Key: key}, d.Stop, nil
}
