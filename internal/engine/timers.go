package engine

// timers remembers when something may expire, so the reaper touches only
// what is due. An entry is a hint: the reaper checks the object itself.
type timers struct {
	sessions  timerHeap // session expiry (re-pushed if a heartbeat moved it)
	deadlines timerHeap // own deadlines that are their node's effective one
	holds     timerHeap // lease hold limits
	removals  timerHeap // when a node ended; due after the retention
	tombs     timerHeap // when a tombstone may be forgotten
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

func (t *timers) pushSession(at int64, id ID)  { t.sessions.push(timerEntry{at, id}) }
func (t *timers) pushDeadline(at int64, id ID) { t.deadlines.push(timerEntry{at, id}) }
func (t *timers) pushHold(at int64, id ID)     { t.holds.push(timerEntry{at, id}) }
func (t *timers) pushRemoval(at int64, id ID)  { t.removals.push(timerEntry{at, id}) }
func (t *timers) pushTomb(at int64, id ID)     { t.tombs.push(timerEntry{at, id}) }
