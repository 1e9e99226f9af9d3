package engine

import "time"

// session is a connected worker. Leases and queued acquires belong to it and
// end with it. Guarded by Engine.mu.
type session struct {
	id      ID
	scope   *node
	ttl     int64 // nanoseconds; 0 never expires
	expires int64 // live only: heartbeats are not recorded
	opened  int64
	token   [32]byte
	leases  leaseList
	waiters []*Waiter // queued acquires, each knowing its position (Waiter.at)
	owned   kidOrder  // the active nodes it owns, in id order: they end when it ends
	ended   int64     // the instant of its end, which marks the nodes it owns; 0 while live (see orphans.go)
	doom    uint64    // the place of its end in the order of dooms
	after   ID        // the steps ending its nodes go on above this id
	listed  ID        // Capture has listed its nodes as changed up to this id
	mem     reqMemory
	memAt   int // the session's place in Engine.memOld plus one; 0 when not in it
	dirty   bool
}

// SessionInfo describes a session.
type SessionInfo struct {
	ID      ID
	Scope   ID
	TTL     time.Duration
	Expires int64 // unix nanoseconds; 0 never
}

func (s *session) info() SessionInfo {
	inf := SessionInfo{ID: s.id, Scope: s.scope.id, TTL: time.Duration(s.ttl)}
	if s.ttl > 0 {
		inf.Expires = s.expires
	}
	return inf
}

// OpenSession opens a session confined to scope. The caller (the daemon,
// after it checked an API key) passes the SHA-256 of the session's token; the
// token itself never reaches the engine. A ttl of zero never expires.
func (e *Engine) OpenSession(c *Call, scope ID, ttl time.Duration, token [32]byte) (SessionInfo, error) {
	if err := validSpan("ttl", ttl, "never expires"); err != nil {
		return SessionInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	if c.Session != 0 {
		return SessionInfo{}, ErrForbidden
	}
	n := e.nodes[scope]
	if n == nil {
		return SessionInfo{}, ErrNotFound
	}
	if n.state != Active || n.doomed() {
		return SessionInfo{}, ErrNodeEnded
	}
	if _, dup := e.tokens[token]; dup {
		return SessionInfo{}, invalid("token", "a session with this token exists already")
	}
	if err := e.boundLocked(n.tenant, BoundSessions, 1); err != nil {
		return SessionInfo{}, err
	}
	ev := &Event{Kind: KindSessionOpened, Target: e.next, Node: scope, TTL: int64(ttl), Token: token[:]}
	e.emitLocked(ev, now)
	return e.sessions[ev.Target].info(), nil
}

// SessionByToken finds the live session whose token hashes to token.
func (e *Engine) SessionByToken(token [32]byte) (SessionInfo, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.tokens[token]
	if s == nil {
		return SessionInfo{}, false
	}
	return s.info(), true
}

// Heartbeat renews the caller's session for one more TTL. Heartbeats are not
// recorded: after a restart every session gets one fresh TTL (see Revive).
func (e *Engine) Heartbeat(c *Call) (SessionInfo, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, err := e.sessionLocked(c)
	if err != nil {
		return SessionInfo{}, err
	}
	if s == nil {
		return SessionInfo{}, invalid("session", "the daemon has no session to renew")
	}
	s.expires = now + s.ttl
	return s.info(), nil
}

// CloseSession ends the caller's session: its leases are released and its
// queued acquires fail. The nodes it owned are ended in steps (see
// orphans.go), which it takes before it answers.
func (e *Engine) CloseSession(c *Call) error {
	if err := e.closeSession(c); err != nil {
		return err
	}
	e.steps(c, e.orphanStepLocked)
	return nil
}

func (e *Engine) closeSession(c *Call) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, err := e.sessionLocked(c)
	if err != nil {
		return err
	}
	if s == nil {
		return invalid("session", "the daemon has no session to close")
	}
	e.endSessionLocked(s, KindSessionClosed, now)
	return nil
}

// Revive gives every session one fresh TTL from now. The daemon calls it once
// after a restart, because heartbeats are not recorded and a restart cannot
// know which sessions were alive.
func (e *Engine) Revive() {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.nowLocked()
	for _, s := range e.sessions {
		s.expires = now + s.ttl
	}
}

// sessionLocked resolves the caller's session. A session that lapsed was
// ended by clockLocked already. A nil session with a nil error is the
// daemon itself.
func (e *Engine) sessionLocked(c *Call) (*session, error) {
	if c.Session == 0 {
		return nil, nil
	}
	s := e.sessions[c.Session]
	if s == nil {
		return nil, ErrSessionEnded
	}
	return s, nil
}

func (e *Engine) applySessionOpened(ev *Event) error {
	scope := e.nodes[ev.Node]
	if scope == nil || ev.Target < e.next || len(ev.Token) != 32 || validSpan("ttl", time.Duration(ev.TTL), "") != nil {
		return corrupt("session %d opened on unknown node %d or with a bad id, token or ttl", ev.Target, ev.Node)
	}
	s := &session{id: ev.Target, scope: scope, ttl: ev.TTL, opened: ev.Time, expires: ev.Time + ev.TTL}
	copy(s.token[:], ev.Token)
	if _, dup := e.tokens[s.token]; dup {
		return corrupt("session %d reuses a token", s.id)
	}
	e.next = ev.Target + 1
	scope.countScoped(1)
	scope.use().add(BoundSessions, 1)
	e.sessions[s.id] = s
	e.tokens[s.token] = s
	if s.ttl > 0 {
		e.timers.pushSession(s.expires, s.id)
	}
	e.markSession(s)
	return nil
}

func (e *Engine) applySessionEnded(ev *Event) error {
	s := e.sessions[ev.Target]
	if s == nil {
		return corrupt("%s of unknown session %d", ev.Kind, ev.Target)
	}
	outcome := OutcomeReleased
	if ev.Kind == KindSessionExpired {
		outcome = OutcomeExpired
	}
	for _, l := range s.leases.all(bySession) {
		e.endLeaseLocked(l, outcome, ev.Time)
	}
	for n := len(s.waiters); n > 0; n = len(s.waiters) {
		e.failWaiterLocked(s.waiters[n-1], ErrSessionEnded)
	}
	e.markOwnedLocked(s, ev.Time)
	s.scope.countScoped(-1)
	s.scope.use().add(BoundSessions, -1)
	e.dropMemLocked(s)
	delete(e.sessions, s.id)
	delete(e.tokens, s.token)
	e.dirty.sessions = append(e.dirty.sessions, s.id)
	return nil
}

// dropWaiter takes w off the session's waiters in O(1): the last one moves
// into its place.
func (s *session) dropWaiter(w *Waiter) {
	last := len(s.waiters) - 1
	moved := s.waiters[last]
	s.waiters[w.at], moved.at = moved, w.at
	s.waiters[last] = nil
	s.waiters = s.waiters[:last]
}

// recallLocked looks up a request id. It returns the remembered result, or an
// error if the id was used with other arguments.
func (e *Engine) recallLocked(s *session, c *Call, hash uint64) (ID, bool, error) {
	m, ok, err := e.recallEntryLocked(s, c, hash)
	return m.result, ok, err
}

// recallEntryLocked is recallLocked with all that was remembered.
func (e *Engine) recallEntryLocked(s *session, c *Call, hash uint64) (memEntry, bool, error) {
	if s == nil || c.Request == "" {
		return memEntry{}, false, nil
	}
	m, ok := s.mem.get(c.Request)
	if !ok {
		return memEntry{}, false, nil
	}
	if m.hash != hash {
		return memEntry{}, false, ErrRequestMismatch
	}
	return m, true, nil
}
