package metrics

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
)

// Metrics holds governord's metrics on a private registry. Create it with
// New; the zero value is not usable. Safe for concurrent use.
type Metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec   // method, code
	duration    *prometheus.HistogramVec // method
	events      *prometheus.CounterVec   // kind
	byKind      []prometheus.Counter     // events' counters indexed by kind, made by New
	commitTime  prometheus.Histogram
	commitBatch prometheus.Histogram
	calls       sync.Map // callKey → *callSeries, each pair's series once looked up
}

// callKey is one API call's labels: its method and how it ended.
type callKey struct{ method, code string }

// callSeries are the series one (method, code) pair counts into.
type callSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// New registers every metric, the tree collector reading store's engine, and
// the Go runtime and process collectors on a new registry.
func New(store *durable.Store) *Metrics { return ForEngine(store.Engine) }

// ForEngine is New for an engine with no durable store: a cluster member's
// replica.
func ForEngine(eng *engine.Engine) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "governor_grpc_requests_total",
			Help: "Calls to the API by method and how they ended (the status code).",
		}, []string{"method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "governor_grpc_request_duration_seconds",
			Help:    "How long calls took, by method. For Acquire this includes the time queued.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10), // 100µs to 26s
		}, []string{"method"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "governor_events_total",
			Help: "Changes to the tree on record, by kind.",
		}, []string{"kind"}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "governor_commit_duration_seconds",
			Help:    "How long one group commit of the event log took.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16), // 50µs to 1.6s
		}),
		commitBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "governor_commit_batch_events",
			Help:    "How many events one group commit wrote: how many changes shared it.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 13), // 1 to 4096
		}),
	}
	for k := engine.Kind(1); !strings.HasPrefix(k.String(), "kind("); k++ {
		m.byKind = append(m.byKind, m.events.WithLabelValues(k.String()))
	}
	m.reg.MustRegister(m.requests, m.duration, m.events, m.commitTime, m.commitBatch,
		newTreeCollector(eng),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveCall counts one API call. method and code must come from fixed
// sets (the service's methods, the status codes): each pair is a series,
// looked up in the vectors once and kept, so that a call costs no label
// hashing.
func (m *Metrics) ObserveCall(method, code string, d time.Duration) {
	s := m.series(method, code)
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
}

// series are the series of the pair (method, code).
func (m *Metrics) series(method, code string) *callSeries {
	k := callKey{method, code}
	if s, ok := m.calls.Load(k); ok {
		return s.(*callSeries)
	}
	s, _ := m.calls.LoadOrStore(k, &callSeries{m.requests.WithLabelValues(method, code), m.duration.WithLabelValues(method)})
	return s.(*callSeries)
}

// ObserveEvents counts events on record by kind. It is meant for the store's
// Committed hook: a few atomic additions per batch, nothing that blocks.
func (m *Metrics) ObserveEvents(evs []*engine.Event) {
	var n [256]int
	for _, ev := range evs {
		n[ev.Kind]++
	}
	for k, c := range n {
		if c == 0 {
			continue
		}
		if k >= 1 && k <= len(m.byKind) {
			m.byKind[k-1].Add(float64(c))
		} else {
			m.events.WithLabelValues(engine.Kind(k).String()).Add(float64(c))
		}
	}
}

// ObserveCommit records one group commit: how many events it wrote and how
// long it took. It is meant for the writer's OnCommit hook.
func (m *Metrics) ObserveCommit(events int, d time.Duration) {
	m.commitTime.Observe(d.Seconds())
	m.commitBatch.Observe(float64(events))
}
