package config

import (
	"fmt"

	"governor.dev/governor/cmd/internal/engine"
)

// Bounds are the most one tenant may hold at once (SPEC §16). A call that
// would take a tenant past one is refused with ResourceExhausted naming it,
// and nothing changes. In the top-level block every key is 1 to
// engine.MaxBound, and a key left out takes its default; in a tenant's
// block a key left out, or 0, takes the top-level value.
type Bounds struct {
	// Nodes beneath the tenant node, ended ones included until they are
	// removed after their retention; each Gubernator-compatible key is one.
	Nodes int64 `yaml:"nodes"`
	// Names: distinct resource names plus distinct class names on the
	// tenant's nodes, leaving out every name this file declares.
	Names int64 `yaml:"names"`
	// Sessions open on the tenant or a node beneath it.
	Sessions int64 `yaml:"sessions"`
	// WatchStreams open by the tenant's sessions.
	WatchStreams int64 `yaml:"watch_streams"`
	// QueuedAcquires waiting on the tenant's nodes.
	QueuedAcquires int64 `yaml:"queued_acquires"`
}

// fields returns b's keys in engine.Bound order; their YAML names are the
// bounds' names.
func (b *Bounds) fields() [engine.NumBounds]*int64 {
	return [engine.NumBounds]*int64{&b.Nodes, &b.Names, &b.Sessions, &b.WatchStreams, &b.QueuedAcquires}
}

// boundsFrom is e in the file's terms.
func boundsFrom(e engine.Bounds) Bounds {
	var b Bounds
	for i, f := range b.fields() {
		*f = e[i]
	}
	return b
}

// over returns b's limits, each 0 taken from def.
func (b Bounds) over(def engine.Bounds) engine.Bounds {
	out := def
	for i, f := range b.fields() {
		if *f != 0 {
			out[i] = *f
		}
	}
	return out
}

// checkBounds checks the top-level bounds (each 1 to engine.MaxBound) and
// each tenant's (0, for the top-level value, to engine.MaxBound).
func (c *Config) checkBounds(k *checker) {
	for i, f := range c.Bounds.fields() {
		k.between("bounds."+engine.Bound(i).String(), *f, 1, engine.MaxBound)
	}
	for ti := range c.Tenants {
		for i, f := range c.Tenants[ti].Bounds.fields() {
			if name := engine.Bound(i).String(); *f < 0 || *f > engine.MaxBound {
				k.add(fmt.Sprintf("tenants[%d].bounds.%s", ti, name),
					"must be 1 to %d, or 0 or left out for the top-level bounds.%s; got %d", int64(engine.MaxBound), name, *f)
			}
		}
	}
}

// EngineBounds returns the bounds to install once each configured tenant's
// node is known: every tenant's limits and every name the file declares.
func (c *Config) EngineBounds(tenants map[string]engine.ID) engine.BoundsConfig {
	def := engine.Bounds{}
	for i, f := range c.Bounds.fields() {
		def[i] = *f
	}
	out := engine.BoundsConfig{Default: def, PerTenant: make(map[engine.ID]engine.Bounds)}
	for _, t := range c.Tenants {
		if id, ok := tenants[t.Name]; ok && t.Bounds != (Bounds{}) {
			out.PerTenant[id] = t.Bounds.over(def)
		}
	}
	out.Declared = c.declaredNames()
	return out
}

// declaredNames lists every resource and class name the file names: the
// root's and the tenants' caps and defaults, the adaptive classes and the
// Gubernator-compatible API's resource.
func (c *Config) declaredNames() []string {
	set := map[string]bool{c.Gubernator.Resource: true}
	caps := func(cs ...Caps) {
		for _, x := range cs {
			for _, m := range []map[string]int64{x.Quotas, x.Limits} {
				for name := range m {
					set[name] = true
				}
			}
			for name := range x.Rates {
				set[name] = true
			}
		}
	}
	caps(c.Root)
	for _, t := range c.Tenants {
		d := t.Defaults
		caps(Caps{Quotas: t.Quotas, Limits: t.Limits, Rates: t.Rates}, Caps{Quotas: d.Quotas, Limits: d.Limits, Rates: d.Rates}, d.Children)
	}
	for class := range c.Adaptive {
		set[class] = true
	}
	return sortedKeys(set)
}
