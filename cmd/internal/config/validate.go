package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// checker collects the problems validation finds.
type checker struct {
	problems []Problem
}

// add records a problem at a field path.
func (k *checker) add(path, format string, args ...any) {
	k.problems = append(k.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// between checks lo <= v <= hi.
func (k *checker) between(path string, v, lo, hi int64) {
	if v < lo || v > hi {
		k.add(path, "must be between %d and %d, got %d", lo, hi, v)
	}
}

// atLeast checks v >= lo.
func (k *checker) atLeast(path string, v, lo int64) {
	if v < lo {
		k.add(path, "must be at least %d, got %d", lo, v)
	}
}

// positive checks d > 0.
func (k *checker) positive(path string, d time.Duration) {
	if d <= 0 {
		k.add(path, "must be a positive duration such as 500ms, 30s or 5m, got %s", d)
	}
}

// span checks 0 < d ≤ engine.MaxSpan: a duration added to the time now.
func (k *checker) span(path string, d time.Duration) {
	k.positive(path, d)
	k.atMostSpan(path, d)
}

// atMostSpan checks d ≤ engine.MaxSpan.
func (k *checker) atMostSpan(path string, d time.Duration) {
	if d > engine.MaxSpan {
		k.add(path, "must be at most %s (366 days), got %s", engine.MaxSpan, d)
	}
}

// oneOf checks that v is one of allowed.
func (k *checker) oneOf(path, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		k.add(path, "must be one of %s; got %q", strings.Join(allowed, ", "), v)
	}
}

// problems returns every mistake in c, without lines.
func (c *Config) problems() []Problem {
	k := &checker{}
	c.checkListeners(k)
	checkDatabaseURL(k, c.DatabaseURL)
	c.checkKeys(k)
	checkCaps(k, "root", c.Root)
	c.checkTenants(k)
	c.checkBounds(k)
	c.checkAdaptive(k)
	c.checkTimings(k)
	c.checkGubernator(k)
	c.checkTracing(k)
	c.checkCluster(k)
	k.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	k.oneOf("log.format", c.Log.Format, "text", "json")
	return k.problems
}

// checkDatabaseURL accepts "", sqlite:PATH and postgres URLs. It never
// repeats the value, which may hold a password.
func checkDatabaseURL(k *checker, url string) {
	switch {
	case url == "":
	case strings.HasPrefix(url, "sqlite:"):
		if strings.TrimPrefix(url, "sqlite:") == "" {
			k.add("database_url", "sqlite: must be followed by the database file's path, as in sqlite:governor.db")
		}
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
	default:
		scheme, _, _ := strings.Cut(url, ":")
		k.add("database_url", `must be sqlite:PATH, postgres://..., postgresql://... or "" to keep everything in memory; got a value starting with %q`, scheme)
	}
}

// checkAdaptive checks each class's controller.
func (c *Config) checkAdaptive(k *checker) {
	for _, class := range sortedKeys(c.Adaptive) {
		a, path := c.Adaptive[class], "adaptive."+class
		checkName(k, path, class, "class")
		k.atLeast(path+".min", a.Min, 1)
		if a.Max == 0 {
			k.add(path+".max", "required: the highest limit the controller may set")
		} else if a.Max < a.Min {
			k.add(path+".max", "must be at least min (%d), got %d", a.Min, a.Max)
		}
		if a.Min <= a.Max && (a.Initial < a.Min || a.Initial > a.Max) {
			k.add(path+".initial", "must be between min (%d) and max (%d), got %d; left out, it is root.limits.%s or else min",
				a.Min, a.Max, a.Initial, class)
		}
		if a.TargetP95 < 0 {
			k.add(path+".target_p95", "must be 0 (ignore latency) or a positive duration, got %s", a.TargetP95)
		}
		if !(a.MaxOverloadShare >= 0 && a.MaxOverloadShare <= 1) {
			k.add(path+".max_overload_share", "must be between 0 and 1, got %g", a.MaxOverloadShare)
		}
		k.positive(path+".interval", a.Interval)
		k.atLeast(path+".min_samples", int64(a.MinSamples), 1)
	}
}

// checkTimings checks sessions, reaping, retention, snapshots and commits.
func (c *Config) checkTimings(k *checker) {
	s := c.Sessions
	k.positive("sessions.min_ttl", s.MinTTL)
	if s.MaxTTL < s.MinTTL {
		k.add("sessions.max_ttl", "must be at least min_ttl (%s), got %s", s.MinTTL, s.MaxTTL)
	}
	k.atMostSpan("sessions.max_ttl", s.MaxTTL)
	if s.MinTTL <= s.MaxTTL && (s.DefaultTTL < s.MinTTL || s.DefaultTTL > s.MaxTTL) {
		k.add("sessions.default_ttl", "must be between min_ttl (%s) and max_ttl (%s), got %s", s.MinTTL, s.MaxTTL, s.DefaultTTL)
	}
	k.positive("reap_interval", c.ReapInterval)
	k.span("retention.nodes", c.Retention.Nodes)
	k.span("retention.tombstones", c.Retention.Tombstones)
	k.atLeast("snapshot_every", c.SnapshotEvery, 0)
	if c.SnapshotInterval < 0 {
		k.add("snapshot_interval", "must be 0 (no snapshot by time) or a positive duration such as 30s or 10m, got %s", c.SnapshotInterval)
	}
	k.atMostSpan("snapshot_interval", c.SnapshotInterval)
	k.atLeast("snapshot_bytes", c.SnapshotBytes, 0)
	if c.MaxScheduleWait < 0 || c.MaxScheduleWait > 24*time.Hour {
		k.add("max_schedule_wait", "must be between 0 (book no wait) and 24h, got %s", c.MaxScheduleWait)
	}
	k.atLeast("commit.max_batch", int64(c.Commit.MaxBatch), 1)
	if c.Commit.MaxBacklog < c.Commit.MaxBatch {
		k.add("commit.max_backlog", "must be at least max_batch (%d), got %d", c.Commit.MaxBatch, c.Commit.MaxBacklog)
	}
}
