package engine

import "container/heap"

// reqMemory remembers what a session's request ids did, oldest first. The
// entries sit in chunks that are never grown in place, so that neither
// remembering nor forgetting ever copies the memory: each is O(1) under the
// engine lock, however many ids a busy session holds.
type reqMemory struct {
	chunks []*memChunk
	head   int // the entries of chunks[0] already forgotten
	n      int
	index  map[string]*memEntry
}

// memChunk holds entries in a slice filled up to its capacity and never
// reallocated, so the index can point into it.
type memChunk struct{ e []memEntry }

// memChunkMax is the largest chunk; the first ones are smaller, so that a
// session that makes few calls holds little.
const memChunkMax = 256

type memEntry struct {
	req    string
	hash   uint64
	result ID
	answer *Tightest // a consume's first answer, shared with nothing that changes it
	at     int64     // the engine's time of the call, unix nanoseconds
}

func (m *reqMemory) get(req string) (memEntry, bool) {
	p, ok := m.index[req]
	if !ok {
		return memEntry{}, false
	}
	return *p, true
}

// add appends me as the newest entry; the caller forgets old ones (trim).
// A call that records several events remembers each: the last one's result
// replaces the first's in its place, which keeps the first's time.
func (m *reqMemory) add(me memEntry) {
	if p, ok := m.index[me.req]; ok {
		me.at = p.at
		*p = me
		return
	}
	if m.index == nil {
		m.index = make(map[string]*memEntry)
	}
	last := len(m.chunks) - 1
	if last < 0 || len(m.chunks[last].e) == cap(m.chunks[last].e) {
		size := min(max(8, m.n), memChunkMax)
		m.chunks = append(m.chunks, &memChunk{e: make([]memEntry, 0, size)})
		last++
	}
	c := m.chunks[last]
	c.e = append(c.e, me)
	m.index[me.req] = &c.e[len(c.e)-1]
	m.n++
}

// oldest returns the oldest entry; the memory must not be empty.
func (m *reqMemory) oldest() *memEntry { return &m.chunks[0].e[m.head] }

// forgetOldest drops the oldest entry.
func (m *reqMemory) forgetOldest() {
	c := m.chunks[0]
	delete(m.index, c.e[m.head].req)
	c.e[m.head] = memEntry{}
	m.head++
	m.n--
	if m.head == cap(c.e) || m.n == 0 {
		m.chunks[0] = nil
		m.chunks = m.chunks[1:]
		m.head = 0
	}
}

// trim forgets the oldest entries the rule of RequestMemory,
// RequestWindow and RequestMemoryMax lets go at time now.
func (m *reqMemory) trim(now int64) {
	for m.n > RequestMemory && (m.n > RequestMemoryMax || m.oldest().at < now-int64(RequestWindow)) {
		m.forgetOldest()
	}
}

// beyond reports whether the memory holds more than its RequestMemory
// most recent ids, which the window keeps only for a while.
func (m *reqMemory) beyond() bool { return m.n > RequestMemory }

// entries returns the remembered requests, oldest first.
func (m *reqMemory) entries() []memEntry {
	out := make([]memEntry, 0, m.n)
	for i, c := range m.chunks {
		if i == 0 {
			out = append(out, c.e[m.head:]...)
			continue
		}
		out = append(out, c.e...)
	}
	return out
}

// rememberLocked keeps what an applied event with a request id did in its
// session's memory, then forgets what the memories of every session may
// let go at the event's time.
func (e *Engine) rememberLocked(ev *Event) {
	if ev.Session == 0 || ev.Request == "" {
		return
	}
	s := e.sessions[ev.Session]
	if s == nil {
		return
	}
	m := memEntry{req: ev.Request, hash: ev.ArgHash, result: ev.Target, at: ev.Time}
	if ev.Kind == KindConsumed {
		m.result = ID(ev.Until) // the slot a scheduled consume booked
		if ev.Answer != nil {
			first := *ev.Answer // the event may be reused once committed
			m.answer = &first
		}
	}
	s.mem.add(m)
	s.mem.trim(ev.Time)
	e.placeMemLocked(s)
	e.markSession(s)
	e.forgetOldRequestsLocked(ev.Time)
}

// forgetOldRequestsLocked trims, at time now, the memories that hold ids
// beyond their most recent RequestMemory (memHeap keeps them by their
// oldest id), so that the ids of a session that went quiet are forgotten
// too. Each session visited forgets at least one id.
func (e *Engine) forgetOldRequestsLocked(now int64) {
	for len(e.memOld) > 0 && e.memOld[0].mem.oldest().at < now-int64(RequestWindow) {
		s := e.memOld[0]
		s.mem.trim(now)
		e.placeMemLocked(s)
		e.markSession(s)
	}
}

// placeMemLocked puts s in memHeap, moves it, or takes it out, as its
// memory holds ids beyond its most recent RequestMemory or not.
func (e *Engine) placeMemLocked(s *session) {
	switch {
	case s.mem.beyond() && s.memAt == 0:
		heap.Push(&e.memOld, s)
	case s.mem.beyond():
		heap.Fix(&e.memOld, s.memAt-1)
	case s.memAt != 0:
		heap.Remove(&e.memOld, s.memAt-1)
	}
}

// dropMemLocked takes an ending session out of memHeap.
func (e *Engine) dropMemLocked(s *session) {
	if s.memAt != 0 {
		heap.Remove(&e.memOld, s.memAt-1)
	}
}

// memHeap holds the sessions whose memory goes beyond its most recent
// RequestMemory ids, the one with the oldest id first (ties by session id).
// session.memAt is a session's place in it plus one, 0 when it is not in
// it.
type memHeap []*session

func (h memHeap) Len() int { return len(h) }

func (h memHeap) Less(i, j int) bool {
	a, b := h[i].mem.oldest().at, h[j].mem.oldest().at
	return a < b || a == b && h[i].id < h[j].id
}

func (h memHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].memAt, h[j].memAt = i+1, j+1
}

func (h *memHeap) Push(x any) {
	s := x.(*session)
	s.memAt = len(*h) + 1
	*h = append(*h, s)
}

func (h *memHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.memAt = 0
	return s
}
