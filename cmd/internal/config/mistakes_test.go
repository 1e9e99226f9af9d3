package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// keyA and keyB are valid plain keys.
const (
	keyA = "key-a-0123456789ab"
	keyB = "key-b-0123456789ab"
)

// hashOf returns key in sha256: form.
func hashOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return KeyHashPrefix + hex.EncodeToString(sum[:])
}

// TestMistakes has one case per kind of mistake, each with the whole
// message a user reads.
func TestMistakes(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		vars map[string]string
		want string
	}{
		// The file's shape.
		{"not yaml", "listen: a\n  b: c\n", nil,
			"g.yaml:2: not valid YAML: mapping values are not allowed in this context"},
		{"two documents", "listen: 127.0.0.1:1\n---\nlisten: 127.0.0.1:2\n", nil,
			"g.yaml:2: only one YAML document is allowed"},
		{"not a mapping", "hello\n", nil,
			`g.yaml:1: must be a mapping of keys, got "hello"`},
		{"unknown key", "listen: 127.0.0.1:1\nlsten: x\n", nil,
			"g.yaml:2: lsten: unknown key; allowed here: listen, metrics_listen, allow_plaintext, tls, database_url, admin_key, root, tenants, adaptive, sessions, reap_interval, retention, max_schedule_wait, snapshot_every, snapshot_interval, snapshot_bytes, commit, log, gubernator, bounds, dashboard, tracing, cluster"},
		{"unknown nested key", "tls:\n  cert: a.pem\n", nil,
			"g.yaml:2: tls.cert: unknown key; allowed here: cert_file, key_file"},
		{"duplicate key", "log:\n  level: info\n  level: debug\n", nil,
			"g.yaml:3: log.level: duplicate key; first given on line 2"},
		{"key not a name", "root:\n  quotas:\n    [a]: 1\n", nil,
			"g.yaml:3: root.quotas: keys must be plain names, got a list"},
		{"list expected", "tenants:\n  name: a\n", nil,
			"g.yaml:2: tenants: must be a list, got a mapping"},
		{"mapping expected", "root:\n  quotas: 5\n", nil,
			`g.yaml:2: root.quotas: must be a mapping of names to values, got "5"`},
		{"value expected", "listen: [a, b]\n", nil,
			"g.yaml:1: listen: must be a single value, got a list"},
		{"not a number", "snapshot_every: lots\n", nil,
			`g.yaml:1: snapshot_every: must be a whole number, got "lots"`},
		{"not a boolean", "allow_plaintext: yes\n", nil,
			`g.yaml:1: allow_plaintext: must be true or false, got "yes"`},
		{"not a duration", "reap_interval: 5\n", nil,
			`g.yaml:1: reap_interval: must be a duration such as 500ms, 30s or 5m, got "5"`},
		{"not a fraction", "adaptive:\n  db: {max: 5, max_overload_share: half}\n", nil,
			`g.yaml:2: adaptive.db.max_overload_share: must be a number, got "half"`},
		{"alias bomb", aliasBomb(), nil,
			"g.yaml:4: the file expands to more than 100000 values through aliases"},

		// Environment variables.
		{"unset variable", "log:\n  level: ${LEVEL}\n", nil,
			"g.yaml:2: log.level: environment variable LEVEL is not set"},
		{"unclosed variable", "admin_key: pa${ss\n", nil,
			"g.yaml:1: admin_key: unclosed ${ (write $$ for a literal dollar)"},
		{"bad variable name", "admin_key: ${1X}\n", nil,
			"g.yaml:1: admin_key: ${1X}: not a variable name: use letters, digits and _, not starting with a digit"},

		// Listeners and TLS.
		{"bad listen", "listen: 7600\n", nil,
			`g.yaml:1: listen: must be host:port with a port from 0 to 65535, such as 127.0.0.1:7600; got "7600"`},
		{"non-loopback in clear", "listen: 0.0.0.0:7600\n", nil,
			`g.yaml:1: listen: "0.0.0.0:7600" is not a loopback address, so keys would cross the network in clear: set tls.cert_file and tls.key_file, or allow_plaintext: true`},
		{"all interfaces in clear", "listen: :7600\n", nil,
			`g.yaml:1: listen: ":7600" is not a loopback address, so keys would cross the network in clear: set tls.cert_file and tls.key_file, or allow_plaintext: true`},
		{"bad metrics listen", "metrics_listen: 127.0.0.1:99999\n", nil,
			`g.yaml:1: metrics_listen: must be host:port, such as 127.0.0.1:7601, or "" or "off" to disable metrics; got "127.0.0.1:99999"`},
		{"metrics on the api port", "listen: 127.0.0.1:9000\nmetrics_listen: 127.0.0.1:9000\n", nil,
			`g.yaml:2: metrics_listen: "127.0.0.1:9000" would take the same port as listen (127.0.0.1:9000): choose another port, or port 0 for any free one`},
		{"metrics on the api port by name", "listen: 127.0.0.1:9000\nmetrics_listen: localhost:9000\n", nil,
			`g.yaml:2: metrics_listen: "localhost:9000" would take the same port as listen (127.0.0.1:9000): choose another port, or port 0 for any free one`},
		{"metrics on every interface", "listen: 127.0.0.1:9000\nmetrics_listen: 0.0.0.0:9000\n", nil,
			`g.yaml:2: metrics_listen: "0.0.0.0:9000" would take the same port as listen (127.0.0.1:9000): choose another port, or port 0 for any free one`},
		{"metrics on the api port in IPv6", "listen: \"[::1]:9000\"\nmetrics_listen: \"[0:0:0:0:0:0:0:1]:9000\"\n", nil,
			`g.yaml:2: metrics_listen: "[0:0:0:0:0:0:0:1]:9000" would take the same port as listen ([::1]:9000): choose another port, or port 0 for any free one`},
		{"certificate without key", "tls:\n  cert_file: c.pem\n", nil,
			"g.yaml:1: tls.key_file: required when tls.cert_file is set: give both or neither"},
		{"key without certificate", "tls:\n  key_file: k.pem\n", nil,
			"g.yaml:1: tls.cert_file: required when tls.key_file is set: give both or neither"},

		// The record.
		{"unknown database", "database_url: mysql://root:hunter2@db/governor\n", nil,
			`g.yaml:1: database_url: must be sqlite:PATH, postgres://..., postgresql://... or "" to keep everything in memory; got a value starting with "mysql"`},
		{"sqlite without a path", "database_url: \"sqlite:\"\n", nil,
			"g.yaml:1: database_url: sqlite: must be followed by the database file's path, as in sqlite:governor.db"},
		{"unknown database from the environment", "database_url: sqlite:a.db\n", map[string]string{DatabaseURLVariable: "redis://x"},
			`g.yaml: GOVERNOR_DATABASE_URL: must be sqlite:PATH, postgres://..., postgresql://... or "" to keep everything in memory; got a value starting with "redis"`},

		// Keys.
		{"short key", "admin_key: secret\n", nil,
			"g.yaml:1: admin_key: must be at least 16 characters, or sha256: and 64 hex digits; got 6 characters"},
		{"short hash", "admin_key: sha256:abcd\n", nil,
			"g.yaml:1: admin_key: sha256: must be followed by 64 hex digits, the SHA-256 of the key; got 4 characters"},
		{"hash not hex", "admin_key: sha256:" + strings.Repeat("z", 64) + "\n", nil,
			"g.yaml:1: admin_key: sha256: must be followed by 64 hex digits, the SHA-256 of the key; got a character that is not a hex digit"},
		{"key with a space", "admin_key: \"a key with spaces in it\"\n", nil,
			"g.yaml:1: admin_key: must be printable ASCII without spaces, as it travels in an Authorization header"},
		{"missing tenant key", "tenants:\n  - name: a\n", nil,
			"g.yaml:2: tenants[0].api_key: required: at least 16 characters, or sha256: and 64 hex digits"},
		{"same key twice", "admin_key: " + keyA + "\ntenants:\n  - name: a\n    api_key: " + keyA + "\n", nil,
			"g.yaml:4: tenants[0].api_key: the same key as admin_key; every key must be different"},
		{"same key plain and hashed", "tenants:\n  - {name: a, api_key: " + keyA + "}\n  - {name: b, api_key: \"" + hashOf(keyA) + "\"}\n", nil,
			"g.yaml:3: tenants[1].api_key: the same key as tenants[0].api_key; every key must be different"},

		// Tenants.
		{"missing tenant name", "tenants:\n  - api_key: " + keyA + "\n", nil,
			"g.yaml:2: tenants[0].name: required: 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter or digit"},
		{"bad tenant name", "tenants:\n  - {name: Team A, api_key: " + keyA + "}\n", nil,
			`g.yaml:2: tenants[0].name: must be 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter or digit; got "Team A"`},
		{"long tenant name", "tenants:\n  - {name: " + strings.Repeat("a", 65) + ", api_key: " + keyA + "}\n", nil,
			`g.yaml:2: tenants[0].name: must be 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter or digit; got "` + strings.Repeat("a", 65) + `"`},
		{"duplicate tenant", "tenants:\n  - {name: a, api_key: " + keyA + "}\n  - {name: a, api_key: " + keyB + "}\n", nil,
			`g.yaml:3: tenants[1].name: "a" is already the name of tenants[0]; tenant names must be unique`},
		{"weight too low", "tenants:\n  - name: a\n    api_key: " + keyA + "\n    weight: 0\n", nil,
			"g.yaml:4: tenants[0].weight: must be between 1 and 1000, got 0"},
		{"weight too high", "tenants:\n  - {name: a, api_key: " + keyA + ", weight: 1001}\n", nil,
			"g.yaml:2: tenants[0].weight: must be between 1 and 1000, got 1001"},
		{"bound of zero", "bounds:\n  nodes: 0\n", nil,
			"g.yaml:2: bounds.nodes: must be between 1 and 1099511627776, got 0"},
		{"bound too high", "bounds: {watch_streams: 1099511627777}\n", nil,
			"g.yaml:1: bounds.watch_streams: must be between 1 and 1099511627776, got 1099511627777"},
		{"negative tenant bound", "tenants:\n  - name: a\n    api_key: " + keyA + "\n    bounds:\n      queued_acquires: -1\n", nil,
			"g.yaml:5: tenants[0].bounds.queued_acquires: must be 1 to 1099511627776, or 0 or left out for the top-level bounds.queued_acquires; got -1"},
		{"unknown bound", "bounds: {streams: 5}\n", nil,
			"g.yaml:1: bounds.streams: unknown key; allowed here: nodes, names, sessions, watch_streams, queued_acquires"},

		// Quotas and limits.
		{"negative quota", "root:\n  quotas:\n    http: -1\n", nil,
			"g.yaml:3: root.quotas.http: must be at least 0, got -1"},
		{"bad resource name", "root:\n  quotas:\n    HTTP: 1\n", nil,
			"g.yaml:3: root.quotas.HTTP: not a valid resource name: use 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter"},
		{"bad class name in child defaults", "tenants:\n  - name: a\n    api_key: " + keyA + "\n    defaults:\n      children:\n        limits: {9db: 1}\n", nil,
			"g.yaml:6: tenants[0].defaults.children.limits.9db: not a valid class name: use 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter"},

		// Adaptive controllers.
		{"bad controller class", "adaptive:\n  DB: {max: 5}\n", nil,
			"g.yaml:2: adaptive.DB: not a valid class name: use 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter"},
		{"controller min", "adaptive:\n  db: {min: 0, max: 5, initial: 1}\n", nil,
			"g.yaml:2: adaptive.db.min: must be at least 1, got 0"},
		{"controller without max", "adaptive:\n  db: {min: 2}\n", nil,
			"g.yaml:2: adaptive.db.max: required: the highest limit the controller may set"},
		{"controller max below min", "adaptive:\n  db: {min: 5, max: 3}\n", nil,
			"g.yaml:2: adaptive.db.max: must be at least min (5), got 3"},
		{"controller initial out of range", "root: {limits: {db: 50}}\nadaptive:\n  db: {max: 20}\n", nil,
			"g.yaml:3: adaptive.db.initial: must be between min (1) and max (20), got 50; left out, it is root.limits.db or else min"},
		{"controller negative target", "adaptive:\n  db: {max: 5, target_p95: -1s}\n", nil,
			"g.yaml:2: adaptive.db.target_p95: must be 0 (ignore latency) or a positive duration, got -1s"},
		{"controller share above one", "adaptive:\n  db: {max: 5, max_overload_share: 1.5}\n", nil,
			"g.yaml:2: adaptive.db.max_overload_share: must be between 0 and 1, got 1.5"},
		{"controller share not a number", "adaptive:\n  db: {max: 5, max_overload_share: nan}\n", nil,
			"g.yaml:2: adaptive.db.max_overload_share: must be between 0 and 1, got NaN"},
		{"controller interval", "adaptive:\n  db: {max: 5, interval: 0s}\n", nil,
			"g.yaml:2: adaptive.db.interval: must be a positive duration such as 500ms, 30s or 5m, got 0s"},
		{"controller samples", "adaptive:\n  db: {max: 5, min_samples: 0}\n", nil,
			"g.yaml:2: adaptive.db.min_samples: must be at least 1, got 0"},

		// Timings.
		{"session min ttl", "sessions: {min_ttl: 0s, default_ttl: 0s}\n", nil,
			"g.yaml:1: sessions.min_ttl: must be a positive duration such as 500ms, 30s or 5m, got 0s"},
		{"session max below min", "sessions:\n  min_ttl: 1m\n  max_ttl: 30s\n", nil,
			"g.yaml:3: sessions.max_ttl: must be at least min_ttl (1m0s), got 30s"},
		{"session default out of range", "sessions:\n  default_ttl: 2h\n", nil,
			"g.yaml:2: sessions.default_ttl: must be between min_ttl (1s) and max_ttl (1h0m0s), got 2h0m0s"},
		{"reap interval", "reap_interval: 0s\n", nil,
			"g.yaml:1: reap_interval: must be a positive duration such as 500ms, 30s or 5m, got 0s"},
		{"node retention", "retention:\n  nodes: -1m\n", nil,
			"g.yaml:2: retention.nodes: must be a positive duration such as 500ms, 30s or 5m, got -1m0s"},
		{"tombstone retention", "retention:\n  tombstones: 0s\n", nil,
			"g.yaml:2: retention.tombstones: must be a positive duration such as 500ms, 30s or 5m, got 0s"},
		{"node retention past 366 days", "retention:\n  nodes: 8785h\n", nil,
			"g.yaml:2: retention.nodes: must be at most 8784h0m0s (366 days), got 8785h0m0s"},
		{"tombstone retention past 366 days", "retention:\n  tombstones: 100000h\n", nil,
			"g.yaml:2: retention.tombstones: must be at most 8784h0m0s (366 days), got 100000h0m0s"},
		{"session max past 366 days", "sessions:\n  max_ttl: 8785h\n", nil,
			"g.yaml:2: sessions.max_ttl: must be at most 8784h0m0s (366 days), got 8785h0m0s"},
		{"snapshot interval", "snapshot_every: -1\n", nil,
			"g.yaml:1: snapshot_every: must be at least 0, got -1"},
		{"snapshot interval negative", "snapshot_interval: -1s\n", nil,
			"g.yaml:1: snapshot_interval: must be 0 (no snapshot by time) or a positive duration such as 30s or 10m, got -1s"},
		{"snapshot interval past 366 days", "snapshot_interval: 8785h\n", nil,
			"g.yaml:1: snapshot_interval: must be at most 8784h0m0s (366 days), got 8785h0m0s"},
		{"snapshot bytes", "snapshot_bytes: -5\n", nil,
			"g.yaml:1: snapshot_bytes: must be at least 0, got -5"},
		{"commit batch", "commit: {max_batch: 0, max_backlog: 10}\n", nil,
			"g.yaml:1: commit.max_batch: must be at least 1, got 0"},
		{"commit backlog", "commit:\n  max_batch: 100\n  max_backlog: 10\n", nil,
			"g.yaml:3: commit.max_backlog: must be at least max_batch (100), got 10"},

		// Rate caps.
		{"rate without per", "root:\n  rates:\n    http: {limit: 10}\n", nil,
			"g.yaml:3: root.rates.http.per: must be between 1ms and 366 days (8784h), got 0s"},
		{"rate algorithm", "root:\n  rates:\n    http: {limit: 10, per: 1m, algorithm: sliding}\n", nil,
			`g.yaml:3: root.rates.http.algorithm: must be token_bucket or leaky_bucket, got "sliding"`},
		{"calendar unit", "tenants:\n- name: a\n  api_key: key-a-0123456789ab\n  rates: {tools: {limit: 500, calendar: fortnight}}\n", nil,
			`g.yaml:4: tenants[0].rates.tools.calendar: must be minute, hour, day, week, month or year, got "fortnight"`},
		{"calendar zone", "tenants:\n- name: a\n  api_key: key-a-0123456789ab\n  rates: {tools: {limit: 500, calendar: day, zone: Europe/Atlantis}}\n", nil,
			`g.yaml:4: tenants[0].rates.tools.zone: "Europe/Atlantis" is not a known IANA time zone (for example "UTC" or "Europe/Paris"): unknown time zone Europe/Atlantis`},
		{"burst on a token bucket", "tenants:\n- name: a\n  api_key: key-a-0123456789ab\n  defaults:\n    children:\n      rates: {http: {limit: 5, per: 1s, burst: 9}}\n", nil,
			"g.yaml:6: tenants[0].defaults.children.rates.http.burst: applies to leaky_bucket only; leave it 0 for token_bucket, got 9"},
		{"rate resource name", "root:\n  rates:\n    HTTP: {limit: 1, per: 1s}\n", nil,
			"g.yaml:3: root.rates.HTTP: not a valid resource name: use 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter"},
		{"schedule ceiling", "max_schedule_wait: 48h\n", nil,
			"g.yaml:1: max_schedule_wait: must be between 0 (book no wait) and 24h, got 48h0m0s"},

		// Logs.
		{"log level", "log:\n  level: verbose\n", nil,
			`g.yaml:2: log.level: must be one of debug, info, warn, error; got "verbose"`},
		{"log format", "log:\n  format: xml\n", nil,
			`g.yaml:2: log.format: must be one of text, json; got "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml), "g.yaml", env(tt.vars))
			var cfgErr *Error
			if !errors.As(err, &cfgErr) || c != nil {
				t.Fatalf("got %+v, %v; want no config and a *Error", c, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the message repeats a password: %s", err)
			}
		})
	}
}

// aliasBomb returns a file whose aliases expand to millions of values.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("root:\n  quotas: &a {x: 1, y: 2, z: 3, w: 4, v: 5, u: 6, t: 7, s: 8, r: 9, q: 10}\ntenants:\n")
	b.WriteString("  - &t {name: a, api_key: " + keyA + ", quotas: *a, limits: *a, defaults: {quotas: *a, limits: *a}}\n")
	for range 20000 {
		b.WriteString("  - *t\n")
	}
	return b.String()
}
