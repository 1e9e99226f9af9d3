package engine

// The checks each live call makes before it changes anything, so that a
// call past a bound is refused with nothing changed. Replay checks nothing:
// what the record holds was admitted when it happened.

// freshNames counts the names a call would bring into a tenant, each once.
type freshNames struct {
	u    *tenantUsage
	seen map[string]bool
	n    int64
}

// add counts name, a resource name when res is set and a class name
// otherwise, if the tenant does not hold it yet.
func (f *freshNames) add(name string, res bool) {
	if f.u == nil || !f.u.fresh(name, res) {
		return
	}
	key := name
	if !res {
		key = "\x00" + name // a class is counted apart from a resource of the same name
	}
	if f.seen == nil {
		f.seen = make(map[string]bool)
	}
	if !f.seen[key] {
		f.seen[key] = true
		f.n++
	}
}

func addKeys[V any](f *freshNames, m map[string]V, res bool) {
	for name := range m {
		f.add(name, res)
	}
}

// admitChildLocked checks that a new child of p made from spec, with charge
// if set, takes p's tenant past neither its node bound nor its name bound.
// A child of the root is a tenant: only the operator makes one, unbounded.
func (e *Engine) admitChildLocked(p *node, spec *Spec, charge *Charge) error {
	t := p.tenant
	if err := e.boundLocked(t, BoundNodes, 1); err != nil {
		return err
	}
	f := freshNames{u: usageOf(t)}
	addKeys(&f, spec.Quotas, true)
	addKeys(&f, spec.Rates, true)
	addKeys(&f, spec.Limits, false)
	addKeys(&f, p.defs().Quotas, true)
	addKeys(&f, p.defs().Rates, true)
	addKeys(&f, p.defs().Limits, false)
	if charge != nil {
		f.add(charge.Resource, true)
	}
	return e.boundLocked(t, BoundNames, f.n)
}

// admitNameLocked checks that naming a resource (res set) or a class on n
// takes its tenant past no name bound. A name n carries already is held by
// its tenant: that, the usual case, costs no look-up in the tenant's names.
func (e *Engine) admitNameLocked(n *node, name string, res bool) error {
	if res && n.findRes(name) != nil || !res && n.cls[name] != nil {
		return nil
	}
	if u := n.use(); u == nil || !u.fresh(name, res) {
		return nil
	}
	return e.boundLocked(n.tenant, BoundNames, 1)
}

// admitKeyedLocked checks that a keyed consume under p, which may create the
// group and key nodes and names k.Resource, takes p's tenant past no bound.
func (e *Engine) admitKeyedLocked(p *node, k *KeyedLimit) error {
	var nodes int64
	switch g := p.byName[k.Group]; {
	case g == nil:
		nodes = 2
	case g.byName[k.Key] == nil:
		nodes = 1
	}
	if err := e.boundLocked(p.tenant, BoundNodes, nodes); err != nil {
		return err
	}
	return e.admitNameLocked(p, k.Resource, true)
}

// WatchSlot is one watch stream counted against its tenant's bound. The
// zero value counts nothing; give every slot HoldWatch returned back with
// FreeWatch once.
type WatchSlot struct {
	u *tenantUsage
}

// HoldWatch counts one more watch stream of the caller's session against its
// tenant's bound, or refuses with a *BoundError if the tenant is at it.
func (e *Engine) HoldWatch(c *Call) (WatchSlot, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, err := e.sessionLocked(c)
	if err != nil || s == nil {
		return WatchSlot{}, err
	}
	t := s.scope.tenant
	if err := e.boundLocked(t, BoundWatches, 1); err != nil {
		return WatchSlot{}, err
	}
	u := usageOf(t)
	u.add(BoundWatches, 1)
	return WatchSlot{u: u}, nil
}

// FreeWatch gives back a slot HoldWatch returned: the stream has ended.
func (e *Engine) FreeWatch(w WatchSlot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w.u.add(BoundWatches, -1)
}
