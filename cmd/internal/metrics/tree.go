package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"governor.dev/governor/cmd/internal/engine"
)

// tree is what the collector reads from the engine: the root with its
// children, and the engine's size. Both take the engine lock briefly.
type tree interface {
	Describe(c *engine.Call, id engine.ID, page *engine.Page) (engine.NodeInfo, []engine.NodeInfo, engine.ID, error)
	Stats() engine.Stats
	Bounds() []engine.TenantBounds
}

var _ tree = (*engine.Engine)(nil)

// treeCollector reads the root and the tenants at every scrape. It keeps
// nothing between scrapes, so a scrape shows the tree as it is.
type treeCollector struct {
	tree tree

	waiting, rootHeld, rootLimit, rootUsed, rootQuota *prometheus.Desc
	tenantUsed, tenantQuota, tenantHeld, tenantLimit  *prometheus.Desc
	nodes, sessions                                   *prometheus.Desc
	boundHeld, boundLimit, boundRefused               *prometheus.Desc
}

var _ prometheus.Collector = (*treeCollector)(nil)

func newTreeCollector(t tree) *treeCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &treeCollector{
		tree:        t,
		waiting:     d("governor_waiting_acquires", "Acquires queued for a lease, by class.", "class"),
		rootHeld:    d("governor_root_leases_held", "Leases held in the whole tree, by class.", "class"),
		rootLimit:   d("governor_root_lease_limit", "The root's concurrency limit, by class: the shared pool. It moves when adaptive.", "class"),
		rootUsed:    d("governor_root_quota_used_total", "Units consumed in the whole tree, by resource.", "resource"),
		rootQuota:   d("governor_root_quota_limit", "The root's quota, by resource.", "resource"),
		tenantUsed:  d("governor_tenant_quota_used_total", "Units a tenant's subtree has consumed, by resource.", "tenant", "resource"),
		tenantQuota: d("governor_tenant_quota_limit", "A tenant's quota, by resource.", "tenant", "resource"),
		tenantHeld:  d("governor_tenant_leases_held", "Leases held in a tenant's subtree, by class.", "tenant", "class"),
		tenantLimit: d("governor_tenant_lease_limit", "A tenant's concurrency limit, by class.", "tenant", "class"),
		nodes:       d("governor_nodes", "Nodes in the tree, ended ones kept for retention included."),
		sessions:    d("governor_sessions", "Open sessions: connected workers."),
		boundHeld:   d("governor_tenant_bound_held", "What a tenant holds of each of its bounds (nodes, names, sessions, watch_streams, queued_acquires).", "tenant", "bound"),
		boundLimit:  d("governor_tenant_bound_limit", "A tenant's bound: the most it may hold.", "tenant", "bound"),
		boundRefused: d("governor_tenant_bound_refusals_total", "Calls refused because they would take a tenant past a bound, since governord started.",
			"tenant", "bound"),
	}
}

// Describe sends every metric's description.
func (c *treeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.waiting, c.rootHeld, c.rootLimit, c.rootUsed, c.rootQuota,
		c.tenantUsed, c.tenantQuota, c.tenantHeld, c.tenantLimit, c.nodes, c.sessions,
		c.boundHeld, c.boundLimit, c.boundRefused,
	} {
		ch <- d
	}
}

// Collect reads the tree now. The daemon's own call (no session) sees the
// whole tree.
func (c *treeCollector) Collect(ch chan<- prometheus.Metric) {
	root, kids, err := c.tenants()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.nodes, err)
		return
	}
	st := c.tree.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.nodes, float64(st.Nodes))
	gauge(c.sessions, float64(st.Sessions))
	waiting := make([]share, 0, len(root.Limits)+len(st.Waiting))
	for class, l := range root.Limits {
		waiting = append(waiting, share{name: class, used: int64(st.Waiting[class]), capped: l.Limited})
	}
	for class, n := range st.Waiting {
		if _, seen := root.Limits[class]; !seen {
			waiting = append(waiting, share{name: class, used: int64(n)})
		}
	}
	for _, s := range split(waiting) {
		gauge(c.waiting, float64(s.used), s.name)
	}
	c.caps(ch, root, c.rootUsed, c.rootQuota, c.rootHeld, c.rootLimit)
	for _, t := range newestByName(kids) {
		c.caps(ch, t, c.tenantUsed, c.tenantQuota, c.tenantHeld, c.tenantLimit, t.Name)
	}
	c.bounds(ch)
}

// bounds sends each tenant's bounds: what it holds, its limit and the
// refusals, one series per tenant and bound. Of tenants sharing a name, the
// newest speaks, as in newestByName.
func (c *treeCollector) bounds(ch chan<- prometheus.Metric) {
	newest := make(map[string]engine.TenantBounds)
	for _, t := range c.tree.Bounds() {
		if old, seen := newest[t.Name]; !seen || t.Tenant > old.Tenant {
			newest[t.Name] = t
		}
	}
	for name, t := range newest {
		for b := range engine.NumBounds {
			label := b.String()
			ch <- prometheus.MustNewConstMetric(c.boundHeld, prometheus.GaugeValue, float64(t.Held[b]), name, label)
			ch <- prometheus.MustNewConstMetric(c.boundLimit, prometheus.GaugeValue, float64(t.Limit[b]), name, label)
			ch <- prometheus.MustNewConstMetric(c.boundRefused, prometheus.CounterValue, float64(t.Refused[b]), name, label)
		}
	}
}

// tenants describes the root and its children, a page at a time: each page
// holds the engine lock only for its own length.
func (c *treeCollector) tenants() (engine.NodeInfo, []engine.NodeInfo, error) {
	var root engine.NodeInfo
	var kids []engine.NodeInfo
	page := engine.Page{Size: engine.MaxPageSize}
	for {
		inf, more, next, err := c.tree.Describe(&engine.Call{}, engine.RootID, &page)
		if err != nil {
			return engine.NodeInfo{}, nil, err
		}
		root, kids = inf, append(kids, more...)
		if next == 0 {
			return root, kids, nil
		}
		page.After = next
	}
}

// caps sends a node's usage and caps; prefix labels (the tenant) come first.
// Names the node caps, and the most used others, get series of their own;
// the rest are summed as otherName (split).
func (c *treeCollector) caps(ch chan<- prometheus.Metric, n engine.NodeInfo, used, quota, held, limit *prometheus.Desc, prefix ...string) {
	with := func(label string) []string { return append(prefix[:len(prefix):len(prefix)], label) }
	resources := make([]share, 0, len(n.Quotas))
	for r, q := range n.Quotas {
		resources = append(resources, share{name: r, used: q.Used, cap: q.Cap, capped: q.Capped})
	}
	for _, s := range split(resources) {
		ch <- prometheus.MustNewConstMetric(used, prometheus.CounterValue, float64(s.used), with(s.name)...)
		if s.capped {
			ch <- prometheus.MustNewConstMetric(quota, prometheus.GaugeValue, float64(s.cap), with(s.name)...)
		}
	}
	classes := make([]share, 0, len(n.Limits))
	for class, l := range n.Limits {
		classes = append(classes, share{name: class, used: l.Held, cap: l.Limit, capped: l.Limited})
	}
	for _, s := range split(classes) {
		ch <- prometheus.MustNewConstMetric(held, prometheus.GaugeValue, float64(s.used), with(s.name)...)
		if s.capped {
			ch <- prometheus.MustNewConstMetric(limit, prometheus.GaugeValue, float64(s.cap), with(s.name)...)
		}
	}
}

// newestByName keeps, of children sharing a name (a tenant ended and made
// again, the old one kept for retention), the newest: the one Ensure finds.
func newestByName(kids []engine.NodeInfo) []engine.NodeInfo {
	at := make(map[string]int, len(kids))
	out := kids[:0:0]
	for _, k := range kids {
		i, seen := at[k.Name]
		switch {
		case !seen:
			at[k.Name] = len(out)
			out = append(out, k)
		case k.ID > out[i].ID:
			out[i] = k
		}
	}
	return out
}
