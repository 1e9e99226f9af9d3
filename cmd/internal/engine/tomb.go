package engine

// An ended lease leaves a tombstone for TombstoneTTL, so that a late release
// or validate learns how the lease ended. Forgetting one is not an event: a
// tombstone past its time answers nothing, so it may be dropped by any call.

// tombstone remembers how a lease ended, for TombstoneTTL.
type tombstone struct {
	id      ID
	node    ID
	session ID
	class   string
	outcome Outcome
	ended   int64
	until   int64
	mark    int // carried over from the lease
}

// endedLeaseLocked answers for a lease that is not live (or not the
// caller's to see): how its tombstone says it ended, or unknown.
func (e *Engine) endedLeaseLocked(s *session, id ID, now int64) error {
	e.forgetTombLocked(id, now)
	if t, ok := e.tombs[id]; ok && (s == nil || e.nodeVisibleLocked(s, t.node)) {
		return &LeaseError{Lease: id, Outcome: t.outcome}
	}
	return &LeaseError{Lease: id, Outcome: OutcomeUnknown}
}

func (e *Engine) nodeVisibleLocked(s *session, id ID) bool {
	n := e.nodes[id]
	return n != nil && n.within(s.scope)
}

// forgetTombLocked drops a tombstone whose time is up.
func (e *Engine) forgetTombLocked(id ID, now int64) {
	if t, ok := e.tombs[id]; ok && now >= t.until {
		delete(e.tombs, id)
		e.markLeaseOnce(&t.mark, id)
	}
}

// forgetDueTombsLocked forgets up to max tombstones whose time is up. Every
// ended lease forgets two, so the tombstones never outnumber those still
// remembered by much, whenever the reaper runs: forgetting is invisible (a
// tombstone past its time answers nothing), so it may happen at any call.
func (e *Engine) forgetDueTombsLocked(now int64, max int) {
	for range max {
		t, ok := e.timers.tombs.due(now)
		if !ok {
			return
		}
		e.forgetTombLocked(t.id, now)
	}
}

// markLeaseOnce lists a lease id as changed since the last capture unless it
// is listed already: mark remembers where it was listed, and the entry there
// still names the id only if no capture has emptied the list since. A lease
// that is granted, ends and is forgotten between two captures is listed once.
func (e *Engine) markLeaseOnce(mark *int, id ID) {
	if i := *mark - 1; i >= 0 && i < len(e.dirty.leases) && e.dirty.leases[i] == id {
		return
	}
	e.markLease(id)
	*mark = len(e.dirty.leases)
}
