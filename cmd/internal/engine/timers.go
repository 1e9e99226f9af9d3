package engine

// timers remembers when something may expire, so the reaper touches only
// what is due. An entry is a hint: the reaper checks the object itself.
type timers struct {
	sessions  timerHeap  // session expiry (re-pushed if a heartbeat moved it)
	deadlines timerHeap  // own deadlines that are their node's effective one
	holds     timerQueue // lease hold limits
	removals  timerHeap  // when a node ended; due after the retention
	tombs     timerQueue // when a tombstone may be forgotten
	keys      timerHeap  // when a keyed node may have started to hold only what a new one would
}

type timerEntry struct {
	at int64
	id ID
}

// timerHeap is a min-heap of entries by time, typed so a push allocates
// nothing beyond the slice's growth.
type timerHeap []timerEntry

func (h *timerHeap) push(x timerEntry) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *timerHeap) pop() timerEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].at < s[m].at {
			m = l
		}
		if r < len(s) && s[r].at < s[m].at {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// due pops the earliest entry if it is at or before t.
func (h *timerHeap) due(t int64) (timerEntry, bool) {
	if len(*h) == 0 || (*h)[0].at > t {
		return timerEntry{}, false
	}
	return h.pop(), true
}

// timerQueue is a timerHeap with a fast lane. Entries that arrive in time
// order (tombstones, forgotten one fixed TTL after they end, and most hold
// limits) join a FIFO at O(1); only an entry earlier than the FIFO's last one
// goes on the heap. due takes the earlier of the two heads.
type timerQueue struct {
	fifo []timerEntry
	head int // fifo[:head] are taken
	heap timerHeap
}

func (q *timerQueue) push(x timerEntry) {
	if n := len(q.fifo); n > q.head && x.at < q.fifo[n-1].at {
		q.heap.push(x)
		return
	}
	q.fifo = append(q.fifo, x)
}

// due takes the earliest entry if it is at or before t.
func (q *timerQueue) due(t int64) (timerEntry, bool) {
	inFIFO := q.head < len(q.fifo) && q.fifo[q.head].at <= t
	if inFIFO && (len(q.heap) == 0 || q.fifo[q.head].at <= q.heap[0].at) {
		x := q.fifo[q.head]
		q.head++
		q.compact()
		return x, true
	}
	return q.heap.due(t)
}

// compact moves the FIFO's entries to the front of its array once half of it
// is taken, so the array is reused instead of growing.
func (q *timerQueue) compact() {
	if q.head < 64 || q.head < len(q.fifo)/2 {
		return
	}
	n := copy(q.fifo, q.fifo[q.head:])
	q.fifo = q.fifo[:n]
	q.head = 0
}

func (h timerHeap) first() (timerEntry, bool) {
	if len(h) == 0 {
		return timerEntry{}, false
	}
	return h[0], true
}

func (q *timerQueue) first() (timerEntry, bool) {
	x, ok := q.heap.first()
	if q.head < len(q.fifo) && (!ok || q.fifo[q.head].at <= x.at) {
		return q.fifo[q.head], true
	}
	return x, ok
}

// dueKind says which kind of time-made decision a timer stands for. At one
// instant they are taken in this order.
type dueKind uint8

const (
	dueSession  dueKind = iota // a session lapses
	dueDeadline                // a node's deadline passes
	dueHold                    // a lease's hold runs out
)

// nextDue takes the earliest entry at or before t among session expiries,
// deadlines and holds; entries at one instant come in dueKind order.
func (tm *timers) nextDue(t int64) (dueKind, timerEntry, bool) {
	kind, found := dueSession, false
	var at int64
	consider := func(k dueKind, x timerEntry, ok bool) {
		if ok && x.at <= t && (!found || x.at < at) {
			kind, at, found = k, x.at, true
		}
	}
	x, ok := tm.sessions.first()
	consider(dueSession, x, ok)
	x, ok = tm.deadlines.first()
	consider(dueDeadline, x, ok)
	x, ok = tm.holds.first()
	consider(dueHold, x, ok)
	if !found {
		return 0, timerEntry{}, false
	}
	switch kind {
	case dueSession:
		x = tm.sessions.pop()
	case dueDeadline:
		x = tm.deadlines.pop()
	default:
		x, _ = tm.holds.due(t)
	}
	return kind, x, true
}

func (t *timers) pushSession(at int64, id ID)  { t.sessions.push(timerEntry{at, id}) }
func (t *timers) pushDeadline(at int64, id ID) { t.deadlines.push(timerEntry{at, id}) }
func (t *timers) pushHold(at int64, id ID)     { t.holds.push(timerEntry{at, id}) }
func (t *timers) pushRemoval(at int64, id ID)  { t.removals.push(timerEntry{at, id}) }
func (t *timers) pushTomb(at int64, id ID)     { t.tombs.push(timerEntry{at, id}) }
func (t *timers) pushKey(at int64, id ID)      { t.keys.push(timerEntry{at, id}) }
