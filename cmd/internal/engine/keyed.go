package engine

// KeyedLimit names a rate limit kept in the tree: under Parent a node named
// Group, beneath it a node named Key, and on that node a rate cap on
// Resource. Gubernator's (name, unique_key) pairs are kept this way.
type KeyedLimit struct {
	Parent   ID
	Group    string
	Key      string
	Resource string
	// Rate is the cap the key node must carry; a different one on record is
	// replaced, its bucket carried over as SetRate carries it.
	Rate Rate
	// Reset makes the key's bucket full first, as ResetRate does.
	Reset bool
}

// ConsumeKeyed finds or creates the group and key nodes, gives the key node
// the rate cap k.Rate unless it carries it already, resets the cap if asked,
// and then consumes n of k.Resource on the key node's chain as ConsumeWith
// does (n of 0 peeks), all in one step under the engine lock: no other call
// sees a key node without its cap, or a cap changed without the charge that
// changed it. A key that exists with the same cap costs one event (the
// charge, or the drain of a refusal), a peek none. It takes no request id.
func (e *Engine) ConsumeKeyed(c *Call, k KeyedLimit, n int64, o ConsumeOptions) (ConsumeResult, error) {
	if err := validKeyed(c, &k, n, o); err != nil {
		return ConsumeResult{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, p, err := e.callerLocked(c, k.Parent)
	if err != nil {
		return ConsumeResult{}, err
	}
	if err := e.admitKeyedLocked(p, &k); err != nil {
		return ConsumeResult{}, err
	}
	group, err := e.keyNodeLocked(s, p, k.Group, nil, now)
	if err != nil {
		return ConsumeResult{}, err
	}
	key, err := e.keyNodeLocked(s, group, k.Key, &k, now)
	if err != nil {
		return ConsumeResult{}, err
	}
	if rs := key.res.get(k.Resource); rs == nil || rs.rate == nil || rs.rate.Rate != k.Rate {
		r := k.Rate
		e.emitLocked(e.stampedLocked(s, &Event{Kind: KindRateSet, Node: key.id, Name: k.Resource, Rate: &r}), now)
	}
	if k.Reset {
		e.emitLocked(e.stampedLocked(s, &Event{Kind: KindRateReset, Node: key.id, Name: k.Resource}), now)
	}
	if n == 0 {
		return e.peekLocked(s, key, k.Resource, now)
	}
	return e.admitLocked(s, c, 0, key, k.Resource, n, now, o)
}

func validKeyed(c *Call, k *KeyedLimit, n int64, o ConsumeOptions) error {
	if c.Request != "" {
		return invalid("request_id", "a keyed consume takes no request id")
	}
	for _, name := range []string{k.Group, k.Key} {
		if err := validName(name); err != nil {
			return err
		}
	}
	if _, err := validRate("rate", &k.Rate); err != nil {
		return err
	}
	return validConsume(c, k.Resource, n, o)
}

// keyNodeLocked returns p's active child named name, or creates it (with
// k's rate cap, for a key node). A child of that name that has ended is
// not replaced while the tree still holds it.
func (e *Engine) keyNodeLocked(s *session, p *node, name string, k *KeyedLimit, now int64) (*node, error) {
	if err := p.activeErr(); err != nil {
		return nil, err
	}
	if n := p.byName[name]; n != nil {
		return n, n.activeErr()
	}
	if p.depth >= MaxDepth {
		return nil, invalid("parent", "the tree is at most %d levels deep", MaxDepth)
	}
	spec := &Spec{Name: name, Keyed: KeyGroup}
	if k != nil {
		spec.Rates, spec.Keyed = map[string]Rate{k.Resource: k.Rate}, KeyNode
	}
	ev := e.stampedLocked(s, &Event{Kind: KindNodeCreated, Target: e.next, Node: p.id, Spec: spec})
	e.emitLocked(ev, now)
	return e.nodes[ev.Target], nil
}

// stampedLocked records the caller's session on ev and returns it.
func (e *Engine) stampedLocked(s *session, ev *Event) *Event {
	e.stampLocked(ev, s, &Call{}, 0)
	return ev
}
