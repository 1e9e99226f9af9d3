package config

import (
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// Default addresses of governord's two listeners.
const (
	DefaultListen        = "127.0.0.1:7600"
	DefaultMetricsListen = "127.0.0.1:7601"
)

// Config is governord's configuration. The zero value is not useful: start
// from Default, or from Parse or Load, which fill every key the file leaves
// out. A Config is plain data and not safe for concurrent mutation; readers
// may share one that nobody changes.
type Config struct {
	// Listen is the API's host:port.
	Listen string `yaml:"listen"`
	// MetricsListen is the Prometheus endpoint's host:port; "" disables it
	// (the file may also say "off").
	MetricsListen string `yaml:"metrics_listen"`
	// AllowPlaintext permits a non-loopback Listen without TLS.
	AllowPlaintext bool `yaml:"allow_plaintext"`
	// TLS names the API's certificate; empty serves plain text.
	TLS TLS `yaml:"tls"`
	// DatabaseURL is "sqlite:PATH", "postgres://…", "postgresql://…", or ""
	// to keep everything in memory. GOVERNOR_DATABASE_URL overrides it.
	DatabaseURL string `yaml:"database_url"`
	// AdminKey is the key whose scope is the root: plain text or
	// "sha256:" and 64 hex digits. Empty: no admin access.
	AdminKey string `yaml:"admin_key"`
	// Root holds the shared pools: the root node's caps.
	Root Caps `yaml:"root"`
	// Tenants are the root's children, one per API key.
	Tenants []Tenant `yaml:"tenants"`
	// Adaptive maps a concurrency class to the controller that moves the
	// root's limit on it.
	Adaptive map[string]Adaptive `yaml:"adaptive"`
	// Sessions bounds the TTLs clients may ask for.
	Sessions Sessions `yaml:"sessions"`
	// ReapInterval is how often expired sessions, leases and deadlines are
	// ended without waiting for a call to notice them.
	ReapInterval time.Duration `yaml:"reap_interval"`
	// Retention says how long ended things are remembered.
	Retention Retention `yaml:"retention"`
	// MaxScheduleWait is the longest wait a consume with max_wait is
	// booked for, whatever it asks; 0 books nothing. At most 24h.
	MaxScheduleWait time.Duration `yaml:"max_schedule_wait"`
	// SnapshotEvery is how many events are recorded between snapshots;
	// 0 never snapshots.
	SnapshotEvery int64 `yaml:"snapshot_every"`
	// SnapshotInterval also snapshots at the first event once this long
	// has passed since the last snapshot, however few events came; 0 never
	// snapshots by time.
	SnapshotInterval time.Duration `yaml:"snapshot_interval"`
	// SnapshotBytes also snapshots at the first event once the events
	// recorded since the last snapshot took this many bytes; 0 never
	// snapshots by size.
	SnapshotBytes int64 `yaml:"snapshot_bytes"`
	// Commit bounds the group commit.
	Commit Commit `yaml:"commit"`
	// Log configures the structured log.
	Log Log `yaml:"log"`
	// Gubernator configures the Gubernator-compatible API.
	Gubernator Gubernator `yaml:"gubernator"`
	// Bounds are the most each tenant may hold at once; a tenant's own
	// block raises or lowers them for it.
	Bounds Bounds `yaml:"bounds"`
	// Dashboard serves the browser dashboard under /ui/ on the API's
	// port. It holds no secret: it signs in with an API key like any
	// client. Default true.
	Dashboard bool `yaml:"dashboard"`
	// Tracing sends OpenTelemetry traces of the API's calls; off by default.
	Tracing Tracing `yaml:"tracing"`
	// Cluster makes governord a member of a replicated cluster; off (all
	// keys empty) by default.
	Cluster Cluster `yaml:"cluster"`
}

// TLS names a certificate and its key, both PEM files. Both are set or
// neither is.
type TLS struct {
	// CertFile is the certificate chain.
	CertFile string `yaml:"cert_file"`
	// KeyFile is the certificate's private key.
	KeyFile string `yaml:"key_file"`
}

// Enabled reports whether a certificate is configured.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Caps are a node's quotas and concurrency limits.
type Caps struct {
	// Quotas maps a resource to the units the node's subtree may consume.
	Quotas map[string]int64 `yaml:"quotas"`
	// Limits maps a concurrency class to the leases the subtree may hold.
	Limits map[string]int64 `yaml:"limits"`
	// Rates maps a resource to the rate cap on the node's subtree.
	Rates map[string]Rate `yaml:"rates"`
}

// Tenant is one of the root's children and the scope of one API key.
type Tenant struct {
	// Name is the tenant node's name, unique among tenants.
	Name string `yaml:"name"`
	// APIKey is the tenant's key: plain text or "sha256:" and 64 hex digits.
	APIKey string `yaml:"api_key"`
	// Weight is the tenant's share of queued grants, 1 to 1000.
	Weight int `yaml:"weight"`
	// Quotas caps the tenant's whole subtree per resource.
	Quotas map[string]int64 `yaml:"quotas"`
	// Limits caps the tenant's concurrent leases per class.
	Limits map[string]int64 `yaml:"limits"`
	// Rates caps the rate of the tenant's whole subtree per resource.
	Rates map[string]Rate `yaml:"rates"`
	// Defaults seed the caps of the tenant's new children when the record
	// has none for the tenant.
	Defaults Defaults `yaml:"defaults"`
	// Bounds override the top-level bounds for this tenant, key by key.
	Bounds Bounds `yaml:"bounds"`
}

// Defaults are the caps a node gives each new child, and the defaults that
// child passes to its own children.
type Defaults struct {
	// Quotas for each new child.
	Quotas map[string]int64 `yaml:"quotas"`
	// Limits for each new child.
	Limits map[string]int64 `yaml:"limits"`
	// Rates for each new child.
	Rates map[string]Rate `yaml:"rates"`
	// Children are the caps each new child gives its own children.
	Children Caps `yaml:"children"`
}

// Adaptive configures the AIMD controller of one concurrency class.
type Adaptive struct {
	// Initial is the limit to start from when the record holds none; by
	// default the root's limit on the class, or Min without one.
	Initial int64 `yaml:"initial"`
	// Min is the lowest limit the controller sets.
	Min int64 `yaml:"min"`
	// Max is the highest limit the controller sets; required.
	Max int64 `yaml:"max"`
	// TargetP95 is the p95 latency above which the limit is cut; 0 ignores
	// latency.
	TargetP95 time.Duration `yaml:"target_p95"`
	// MaxOverloadShare is the share of overloaded releases, 0 to 1, above
	// which the limit is cut.
	MaxOverloadShare float64 `yaml:"max_overload_share"`
	// Interval is how often the controller decides.
	Interval time.Duration `yaml:"interval"`
	// MinSamples is how many releases an interval needs before the limit
	// moves.
	MinSamples int `yaml:"min_samples"`
}

// Sessions bounds session TTLs.
type Sessions struct {
	// DefaultTTL is granted when a client asks for none.
	DefaultTTL time.Duration `yaml:"default_ttl"`
	// MinTTL is the shortest TTL granted.
	MinTTL time.Duration `yaml:"min_ttl"`
	// MaxTTL is the longest TTL granted.
	MaxTTL time.Duration `yaml:"max_ttl"`
}

// Retention says how long ended things are kept in memory and the record.
type Retention struct {
	// Nodes is how long an ended node stays describable; by default the
	// engine's node_retention, 10 minutes (SPEC §2).
	Nodes time.Duration `yaml:"nodes"`
	// Tombstones is how long an ended lease is remembered, so that a late
	// release or validate learns how it ended.
	Tombstones time.Duration `yaml:"tombstones"`
}

// Commit bounds the group commit of the event log.
type Commit struct {
	// MaxBacklog is how many events may wait for a commit before callers
	// are held back.
	MaxBacklog int `yaml:"max_backlog"`
	// MaxBatch is the most events written in one transaction.
	MaxBatch int `yaml:"max_batch"`
}

// Log configures the structured log.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is text or json.
	Format string `yaml:"format"`
}

// base returns the value of every key a file leaves out.
func base() *Config {
	return &Config{
		Listen:        DefaultListen,
		MetricsListen: DefaultMetricsListen,
		Sessions: Sessions{
			DefaultTTL: 30 * time.Second,
			MinTTL:     time.Second,
			MaxTTL:     time.Hour,
		},
		ReapInterval: time.Second,
		Retention: Retention{
			Nodes:      engine.DefaultSettings().NodeRetention,
			Tombstones: engine.DefaultSettings().TombstoneTTL,
		},
		SnapshotEvery:   10000,
		MaxScheduleWait: DefaultMaxScheduleWait,
		Commit: Commit{
			MaxBacklog: 16384,
			MaxBatch:   1024,
		},
		Log:        Log{Level: "info", Format: "text"},
		Gubernator: Gubernator{Resource: DefaultGubernatorResource, IdleTTL: DefaultGubernatorIdleTTL},
		Dashboard:  true,
		Tracing:    defaultTracing(),
		Bounds:     boundsFrom(engine.DefaultBounds()),
	}
}

// DemoTenant is the tenant Default configures.
const DemoTenant = "demo"

// Default returns the configuration governord runs with when it is given no
// file: loopback only, the record in governor.db in the working directory,
// and one tenant, DemoTenant. It holds no keys: the daemon generates the
// admin key and the tenant's key, keeps them, sets AdminKey and
// Tenants[0].APIKey, and then calls Validate.
func Default() *Config {
	c := base()
	c.DatabaseURL = "sqlite:governor.db"
	c.Tenants = []Tenant{{Name: DemoTenant, Weight: 1}}
	return c
}

// setDefaults fills a tenant's keys that a file leaves out.
func (t *Tenant) setDefaults() { t.Weight = 1 }

// setDefaults fills a controller's keys that a file leaves out. Initial is
// resolved against the root's limits after decoding.
func (a *Adaptive) setDefaults() {
	a.Min = 1
	a.MaxOverloadShare = 0.1
	a.Interval = time.Second
	a.MinSamples = 10
}
