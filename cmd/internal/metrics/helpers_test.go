package metrics

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/eventlog"
)

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// rig is an in-memory store wired to metrics the way the daemon wires them:
// committed events and commits reach the Metrics.
type rig struct {
	t     testing.TB
	store *durable.Store
	m     *Metrics
}

func newRig(t testing.TB) *rig {
	t.Helper()
	var m atomic.Pointer[Metrics]
	s, err := durable.Open(context.Background(), durable.Options{
		Clock:  fixedClock{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Committed: func(evs []*engine.Event) {
			if m := m.Load(); m != nil {
				m.ObserveEvents(evs)
			}
		},
		Writer: eventlog.WriterOptions{OnCommit: func(n int, d time.Duration) {
			if m := m.Load(); m != nil {
				m.ObserveCommit(n, d)
			}
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, store: s, m: New(s)}
	m.Store(r.m)
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r
}

// do runs one engine call the way the daemon does: room, apply, wait.
func (r *rig) do(c *engine.Call, op func(c *engine.Call) error) error {
	ctx := context.Background()
	if err := r.store.Room(ctx); err != nil {
		return err
	}
	err := op(c)
	if werr := r.store.Wait(ctx, c.Seq); werr != nil {
		return werr
	}
	return err
}

// must is do that fails the test on an error.
func (r *rig) must(c *engine.Call, op func(c *engine.Call) error) {
	r.t.Helper()
	if err := r.do(c, op); err != nil {
		r.t.Fatal(err)
	}
}

// tenant creates a child of the root with caps.
func (r *rig) tenant(name string, caps engine.Caps) engine.ID {
	r.t.Helper()
	var n engine.NodeInfo
	r.must(&engine.Call{}, func(c *engine.Call) (err error) {
		n, err = r.store.Engine.Create(c, engine.RootID, engine.Spec{Name: name, Quotas: caps.Quotas, Limits: caps.Limits})
		return err
	})
	return n.ID
}

var tokens atomic.Int64

// session opens a session that never lapses on scope.
func (r *rig) session(scope engine.ID) engine.ID {
	r.t.Helper()
	tok := sha256.Sum256(fmt.Append(nil, "metrics-token-", tokens.Add(1)))
	var s engine.SessionInfo
	r.must(&engine.Call{}, func(c *engine.Call) (err error) {
		s, err = r.store.Engine.OpenSession(c, scope, 0, tok)
		return err
	})
	return s.ID
}

// scrape fetches the handler's page and parses it.
func (r *rig) scrape() map[string]*dto.MetricFamily {
	r.t.Helper()
	text := r.scrapeText()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		r.t.Fatalf("parse the scrape: %v", err)
	}
	return fams
}

func (r *rig) scrapeText() string {
	r.t.Helper()
	rec := httptest.NewRecorder()
	r.m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		r.t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// governorText is the scrape's lines about governor_ metrics.
func governorText(text string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "governor_") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// value returns the sample of family name whose labels are exactly labels
// (name=value pairs); a histogram gives its count.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	want := strings.Join(labels, ",")
	for _, m := range f.GetMetric() {
		var got []string
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName()+"="+lp.GetValue())
		}
		sort.Strings(got)
		if strings.Join(got, ",") != want {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// series counts the governor_ series of a scrape (a histogram counts as its
// buckets, sum and count) and checks that every label is one the
// configuration bounds.
func series(t testing.TB, fams map[string]*dto.MetricFamily) int {
	t.Helper()
	allowed := map[string]bool{"method": true, "code": true, "kind": true, "tenant": true, "class": true, "resource": true, "bound": true}
	n := 0
	for name, f := range fams {
		if !strings.HasPrefix(name, "governor_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if !allowed[lp.GetName()] {
					t.Errorf("%s has label %s=%q: labels are methods, codes, kinds, tenants, classes, resources and bounds only",
						name, lp.GetName(), lp.GetValue())
				}
			}
			n++
			if h := m.GetHistogram(); h != nil {
				n += len(h.GetBucket()) + 1
			}
		}
	}
	return n
}

// await scrapes until the sample reaches want: committed events reach the
// metrics after the writer has woken the callers.
func (r *rig) await(want float64, name string, labels ...string) map[string]*dto.MetricFamily {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		fams := r.scrape()
		got, _ := value(fams, name, labels...)
		if got == want {
			return fams
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s{%s} = %v, want %v", name, strings.Join(labels, ","), got, want)
		}
	}
}
