package engine

import (
	"fmt"
	"time"
)

// lease is one slot of a concurrency limit, on every node of its chain.
type lease struct {
	id      ID
	node    *node
	cs      *classState // the node's state of class, linked up its chain
	class   string
	session *session
	granted int64
	until   int64 // the hold ends here, 0 if unbounded
	mark    int   // where the id was last listed as changed, plus one (see markLeaseOnce)
	links   [2]leaseLink
}

// Outcome is how a lease ended, or what a release found.
type Outcome uint8

// The outcomes of a lease.
const (
	OutcomeReleased        Outcome = iota + 1 // its holder gave it back
	OutcomeAlreadyReleased                    // a release found it given back already
	OutcomeExpired                            // its session lapsed or its hold ran out
	OutcomeRevoked                            // its node ended
	OutcomeNotOwner                           // a release named another session's lease
	OutcomeUnknown                            // no such lease, or forgotten
)

var outcomeNames = [...]string{"", "released", "already released", "expired", "revoked", "held by another session", "unknown"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && o > 0 {
		return outcomeNames[o]
	}
	return "unknown"
}

// LeaseInfo describes a live lease.
type LeaseInfo struct {
	ID      ID
	Node    ID
	Class   string
	Session ID
	Granted int64 // unix nanoseconds
	Until   int64 // end of the hold, unix nanoseconds; 0 if none
}

func (l *lease) info() LeaseInfo {
	return LeaseInfo{ID: l.id, Node: l.node.id, Class: l.class, Session: l.session.id, Granted: l.granted, Until: l.until}
}

// fitsLocked reports whether one more lease of class fits on n's whole chain.
// Once a lease of class was granted on n the chain is linked, and the walk
// follows it without looking anything up.
func fitsLocked(n *node, class string) bool {
	if cs := n.cls[class]; cs != nil && cs.linked(n) {
		for ; cs != nil; cs = cs.up {
			if cs.limited && cs.held >= cs.limit {
				return false
			}
		}
		return true
	}
	for a := n; a != nil; a = a.parent {
		if cs := a.cls[class]; cs != nil && cs.limited && cs.held >= cs.limit {
			return false
		}
	}
	return true
}

// linked reports whether cs, n's state of a class, reaches the root's
// through up.
func (cs *classState) linked(n *node) bool { return cs.up != nil || n.parent == nil }

// classChain returns n's state of class c, creating it and linking it (and
// every ancestor's) through up where that is not done yet.
func (n *node) classChain(c string) *classState {
	cs := n.class(c)
	if !cs.linked(n) {
		cs.up = n.parent.classChain(c)
	}
	return cs
}

// Acquire grants one lease of class on node id if every node on its chain has
// a free slot; otherwise the acquire waits in the class's fair queue and the
// returned Waiter delivers the outcome. maxHold, if positive, bounds how long
// the lease may be held. Only a session can hold a lease.
func (e *Engine) Acquire(c *Call, id ID, class string, maxHold time.Duration) (LeaseInfo, *Waiter, error) {
	return e.acquire(c, id, class, maxHold, true)
}

// TryAcquire grants one lease of class on node id, as Acquire does, if every
// node on its chain has a free slot now; otherwise it returns ErrNoSlot in one
// step, without queueing and without recording anything, so it never counts
// against the queued-acquires bound and no waiter exists for a release to
// grant. Like Acquire it grants a slot that fits even while others wait for
// the class: a waiter is queued only behind a chain that is full, and a slot
// that fits is one no waiter can take. A repeat of a request id answers with
// the lease it was granted; an id whose Acquire still waits answers
// ErrNoSlot and leaves that waiter queued.
func (e *Engine) TryAcquire(c *Call, id ID, class string, maxHold time.Duration) (LeaseInfo, error) {
	lease, _, err := e.acquire(c, id, class, maxHold, false)
	return lease, err
}

// acquire is Acquire, or TryAcquire when queue is false: then it returns no
// waiter, and ErrNoSlot where Acquire would queue or find one queued.
func (e *Engine) acquire(c *Call, id ID, class string, maxHold time.Duration, queue bool) (LeaseInfo, *Waiter, error) {
	if err := validKey("class", class); err != nil {
		return LeaseInfo{}, nil, err
	}
	if err := validSpan("max_hold", maxHold, "no bound"); err != nil {
		return LeaseInfo{}, nil, err
	}
	if err := validRequest(c); err != nil {
		return LeaseInfo{}, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, err := e.sessionLocked(c)
	if err != nil {
		return LeaseInfo{}, nil, err
	}
	if s == nil {
		return LeaseInfo{}, nil, invalid("session", "a lease needs a session to hold it")
	}
	n, err := e.resolveLocked(s, id)
	if err != nil {
		return LeaseInfo{}, nil, err
	}
	var h uint64
	if c.Request != "" {
		h = uint64(newHash(KindLeaseGranted).num(int64(id)).str(class).num(int64(maxHold)))
		if lid, ok, err := e.recallLocked(s, c, h); err != nil || ok {
			if err != nil {
				return LeaseInfo{}, nil, err
			}
			return e.leaseInfoLocked(lid)
		}
		if w, err := s.queuedFor(c.Request, h); w != nil || err != nil {
			if err == nil && !queue {
				return LeaseInfo{}, nil, noSlot(n, class)
			}
			return LeaseInfo{}, w, err
		}
	}
	if err := n.activeErr(); err != nil {
		return LeaseInfo{}, nil, err
	}
	if err := e.admitNameLocked(n, class, false); err != nil {
		return LeaseInfo{}, nil, err
	}
	if fitsLocked(n, class) {
		id := e.grantLocked(s, n, class, int64(maxHold), c.Request, h, now)
		return e.leases[id].info(), nil, nil
	}
	if !queue {
		return LeaseInfo{}, nil, noSlot(n, class)
	}
	if err := e.boundLocked(n.tenant, BoundQueued, 1); err != nil {
		return LeaseInfo{}, nil, err
	}
	w := e.enqueueLocked(s, n, class, int64(maxHold), c.Request, h)
	return LeaseInfo{}, w, nil
}

// noSlot is TryAcquire's refusal: no slot of class is free on n's chain.
func noSlot(n *node, class string) error {
	return fmt.Errorf("%w: every %s slot is held somewhere on node %d's chain", ErrNoSlot, class, n.id)
}

// grantLocked emits the grant of a lease and returns its id.
func (e *Engine) grantLocked(s *session, n *node, class string, maxHold int64, req string, h uint64, now int64) ID {
	id := e.next
	ev := e.nextEventLocked()
	ev.Kind, ev.Target, ev.Node, ev.Name, ev.Session = KindLeaseGranted, id, n.id, class, s.id
	if maxHold > 0 {
		ev.Until = now + maxHold
	}
	if req != "" {
		ev.Request, ev.ArgHash = req, h
	}
	e.emitLocked(ev, now)
	return id
}

func (e *Engine) leaseInfoLocked(id ID) (LeaseInfo, *Waiter, error) {
	if l := e.leases[id]; l != nil {
		return l.info(), nil, nil
	}
	return LeaseInfo{}, nil, e.endedLeaseErrLocked(id)
}

func (e *Engine) endedLeaseErrLocked(id ID) error {
	if t, ok := e.tombs[id]; ok {
		return &LeaseError{Lease: id, Outcome: t.outcome}
	}
	return &LeaseError{Lease: id, Outcome: OutcomeUnknown}
}

// Release gives back a lease the caller's session holds, with a report on the
// downstream. A lease already given back answers OutcomeAlreadyReleased; one
// that expired, was revoked, is held by another session or is unknown is a
// *LeaseError, and nothing changes.
func (e *Engine) Release(c *Call, id ID, rep Report) (Outcome, error) {
	if rep.LatencyNanos < 0 {
		return 0, invalid("latency", "must not be negative")
	}
	if err := validRequest(c); err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, err := e.sessionLocked(c)
	if err != nil {
		return 0, err
	}
	var h uint64
	if c.Request != "" {
		h = releaseHash(id, rep)
		if _, ok, err := e.recallLocked(s, c, h); err != nil || ok {
			if err != nil {
				return 0, err
			}
			return OutcomeReleased, nil
		}
	}
	l, err := e.liveLeaseLocked(s, id, now)
	if err != nil {
		if t, ok := e.tombs[id]; ok && t.outcome == OutcomeReleased && (s == nil || t.session == s.id) {
			return OutcomeAlreadyReleased, nil
		}
		return 0, err
	}
	if s != nil && l.session != s {
		return 0, &LeaseError{Lease: id, Outcome: OutcomeNotOwner}
	}
	ev := e.nextEventLocked()
	ev.Kind, ev.Target, ev.Node, ev.Name, ev.Report = KindLeaseReleased, l.id, l.node.id, l.class, rep
	e.stampLocked(ev, s, c, h)
	e.emitLocked(ev, now)
	return OutcomeReleased, nil
}

func releaseHash(id ID, rep Report) uint64 {
	var overloaded byte
	if rep.Overloaded {
		overloaded = 1
	}
	return uint64(newHash(KindLeaseReleased).num(int64(id)).num(rep.LatencyNanos).byte(overloaded))
}

// liveLeaseLocked finds a live lease. A lease that time ended (its
// holder's session lapsed, its node's deadline passed or its hold ran out)
// was ended by clockLocked already. A lease the caller cannot see is
// unknown.
func (e *Engine) liveLeaseLocked(s *session, id ID, now int64) (*lease, error) {
	l := e.leases[id]
	if l == nil || s != nil && !l.node.within(s.scope) {
		return nil, e.endedLeaseLocked(s, id, now)
	}
	return l, nil
}

// Validate reports whether a lease is live. A downstream calls it before
// irreversible work; remembering the largest lease id seen is stronger.
func (e *Engine) Validate(c *Call, id ID) (LeaseInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, err := e.sessionLocked(c)
	if err != nil {
		return LeaseInfo{}, err
	}
	l, err := e.liveLeaseLocked(s, id, now)
	if err != nil {
		return LeaseInfo{}, err
	}
	return l.info(), nil
}

func (e *Engine) applyLeaseGranted(ev *Event) error {
	n := e.nodes[ev.Node]
	s := e.sessions[ev.Session]
	if n == nil || s == nil || n.state != Active || ev.Target < e.next || e.replay && validKey("class", ev.Name) != nil {
		return corrupt("event %d grants lease %d on unknown or ended node %d or session %d", ev.Seq, ev.Target, ev.Node, ev.Session)
	}
	l := e.newLease()
	*l = lease{id: ev.Target, node: n, cs: n.classChain(ev.Name), class: ev.Name, session: s, granted: ev.Time, until: ev.Until}
	e.next = l.id + 1
	e.leases[l.id] = l
	n.leases.push(l, byNode)
	s.leases.push(l, bySession)
	for cs := l.cs; cs != nil; cs = cs.up {
		cs.held++
		e.markNode(cs.node)
	}
	if l.until != 0 {
		e.timers.pushHold(l.until, l.id)
	}
	e.markLeaseOnce(&l.mark, l.id)
	return nil
}

func (e *Engine) applyLeaseEnded(ev *Event) error {
	l := e.leases[ev.Target]
	if l == nil {
		return corrupt("event %d ends unknown lease %d", ev.Seq, ev.Target)
	}
	outcome := OutcomeReleased
	if ev.Kind == KindLeaseExpired {
		outcome = OutcomeExpired
	}
	e.endLeaseLocked(l, outcome, ev.Time)
	return nil
}

// endLeaseLocked ends a lease exactly once: the slot is freed on every node of
// its chain, a tombstone remembers how it ended, and its class's queue may
// grant again.
func (e *Engine) endLeaseLocked(l *lease, outcome Outcome, now int64) {
	delete(e.leases, l.id)
	l.node.leases.remove(l, byNode)
	l.session.leases.remove(l, bySession)
	for cs := l.cs; cs != nil; cs = cs.up {
		cs.held--
		e.slotFreedLocked(cs)
		e.markNode(cs.node)
	}
	e.markLeaseOnce(&l.mark, l.id)
	if e.settings.TombstoneTTL > 0 {
		e.tombs[l.id] = tombstone{
			id: l.id, node: l.node.id, session: l.session.id, class: l.class,
			outcome: outcome, ended: now, until: now + int64(e.settings.TombstoneTTL), mark: l.mark,
		}
		e.timers.pushTomb(now+int64(e.settings.TombstoneTTL), l.id)
	}
	e.forgetDueTombsLocked(now, 2)
	e.wantDispatch(l.class)
	e.freeLease(l)
}
