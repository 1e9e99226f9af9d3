package engine

import (
	"cmp"
	"fmt"
	"slices"
)

// Bound is one of the things a tenant may hold only so many of at once, so
// that no tenant can take the memory, the metrics or the queues the others
// need. A tenant is a child of the root; the root and sessions scoped to it
// (the operator) are bound by nothing.
type Bound uint8

// The bounds. What each counts:
const (
	// BoundNodes counts the nodes beneath the tenant node, ended ones
	// included until they are removed after their retention; keys of the
	// Gubernator-compatible API are nodes too.
	BoundNodes Bound = iota
	// BoundNames counts the distinct resource names and the distinct class
	// names on the nodes of the tenant's subtree (the tenant node
	// included), leaving out the names the configuration file declares. A
	// name counts while a node of the subtree still carries it.
	BoundNames
	// BoundSessions counts the open sessions scoped to a node of the
	// tenant's subtree.
	BoundSessions
	// BoundWatches counts the open watch streams of the tenant's sessions.
	BoundWatches
	// BoundQueued counts the acquires queued on nodes of the subtree.
	BoundQueued
	// NumBounds is how many bounds there are.
	NumBounds
)

var boundNames = [NumBounds]string{"nodes", "names", "sessions", "watch_streams", "queued_acquires"}

// String is the bound's name in the configuration file and the metrics.
func (b Bound) String() string {
	if b < NumBounds {
		return boundNames[b]
	}
	return "unknown"
}

// Bounds holds a limit for each Bound, indexed by it. Every limit is at
// least 1.
type Bounds [NumBounds]int64

// DefaultBounds are the limits of a tenant the configuration says nothing
// about: far above what one well-behaved tenant holds, far below what
// takes governord's memory. A node costs about a kilobyte, so a million is
// about a gigabyte; a name about 200 bytes on each node that carries it,
// so 100,000 on the tenant node and the root are some 40 MB, and the
// metrics sum all but a few names of a tenant into one series anyway.
func DefaultBounds() Bounds {
	return Bounds{
		BoundNodes:    1_000_000,
		BoundNames:    100_000,
		BoundSessions: 10_000,
		BoundWatches:  100,
		BoundQueued:   100_000,
	}
}

// MaxBound is the largest limit a bound takes.
const MaxBound = 1 << 40

// Check returns an error naming the first limit outside 1 to MaxBound.
func (b *Bounds) Check() error {
	for i, v := range b {
		if v < 1 || v > MaxBound {
			return invalid("bounds."+Bound(i).String(), "must be 1 to %d, got %d", int64(MaxBound), v)
		}
	}
	return nil
}

// BoundsConfig is what SetBounds installs: the limits of every tenant
// (Default, unless PerTenant names the tenant node), and the resource and
// class names the configuration declares, which count against no tenant.
type BoundsConfig struct {
	Default   Bounds
	PerTenant map[ID]Bounds
	Declared  []string
}

// BoundError refuses a call that would take a tenant past one of its
// bounds. Nothing changed.
type BoundError struct {
	Bound  Bound
	Tenant string // the tenant node's name
	Held   int64  // what the tenant holds now
	Adding int64  // what the call would have added
	Limit  int64
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("tenant %q would pass its bound on %s: it holds %d, the call would add %d, and the bound is %d; "+
		"free some, or ask the operator to raise bounds.%s for the tenant in the configuration file",
		e.Tenant, e.Bound, e.Held, e.Adding, e.Limit, e.Bound)
}

// bounding is the engine's side of the bounds. Guarded by Engine.mu; it is
// configuration, not part of the record, so a restart with other limits
// takes them without changing any event.
type bounding struct {
	def      Bounds
	per      map[ID]Bounds
	declared map[string]bool
}

// SetBounds installs the tenants' limits. A tenant already past a new limit
// keeps what it holds; only what would add to it is refused.
func (e *Engine) SetBounds(cfg BoundsConfig) error {
	if err := cfg.Default.Check(); err != nil {
		return err
	}
	per := make(map[ID]Bounds, len(cfg.PerTenant))
	for id, b := range cfg.PerTenant {
		if err := b.Check(); err != nil {
			return fmt.Errorf("tenant node %d: %w", id, err)
		}
		per[id] = b
	}
	declared := make(map[string]bool, len(cfg.Declared))
	for _, name := range cfg.Declared {
		declared[name] = true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bounds = bounding{def: cfg.Default, per: per, declared: declared}
	e.recountLocked()
	return nil
}

// limitsLocked returns the limits of tenant node t.
func (e *Engine) limitsLocked(t *node) Bounds {
	if b, ok := e.bounds.per[t.id]; ok {
		return b
	}
	return e.bounds.def
}

// boundLocked refuses, with a *BoundError, adding more of b to what tenant
// node t holds when that would pass its limit. The root and nil bind
// nothing.
func (e *Engine) boundLocked(t *node, b Bound, more int64) error {
	u := usageOf(t)
	if u == nil || more == 0 {
		return nil
	}
	limit := e.limitsLocked(t)[b]
	if u.held[b] <= limit-more {
		return nil
	}
	u.refused[b]++
	return &BoundError{Bound: b, Tenant: t.name, Held: u.held[b], Adding: more, Limit: limit}
}

// TenantBounds is what one tenant holds against its bounds, its limits, and
// how many calls each bound refused since governord started.
type TenantBounds struct {
	Tenant  ID
	Name    string
	Held    Bounds
	Limit   Bounds
	Refused [NumBounds]uint64
}

// Bounds reports every tenant's bounds, in tenant id order. It is
// O(tenants): the counts are kept as things change.
func (e *Engine) Bounds() []TenantBounds {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]TenantBounds, 0, e.root.order.len())
	for t := range e.root.order.all() {
		out = append(out, TenantBounds{Tenant: t.id, Name: t.name, Held: t.usage.held, Limit: e.limitsLocked(t), Refused: t.usage.refused})
	}
	slices.SortFunc(out, func(a, b TenantBounds) int { return cmp.Compare(a.Tenant, b.Tenant) })
	return out
}
