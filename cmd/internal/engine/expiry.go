package engine

// Expiries returns when each session with a TTL lapses unless renewed,
// unix nanoseconds by session id. Heartbeats are not events, so a snapshot
// does not hold these times: a replica that installs a snapshot takes them
// with it (SetExpiries) to lapse its sessions when the others do. It is
// O(sessions).
func (e *Engine) Expiries() map[ID]int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[ID]int64, len(e.sessions))
	for id, s := range e.sessions {
		if s.ttl > 0 {
			out[id] = s.expires
		}
	}
	return out
}

// SetExpiries sets when the sessions named in m lapse, as Expiries returned
// them; sessions not in m or without a TTL keep theirs.
func (e *Engine) SetExpiries(m map[ID]int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, at := range m {
		if s := e.sessions[id]; s != nil && s.ttl > 0 {
			s.expires = at
			e.timers.pushSession(at, id)
		}
	}
}
