package engine

import "container/heap"

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

type timerHeap []timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// due pops the earliest entry if it is at or before t.
func (h *timerHeap) due(t int64) (timerEntry, bool) {
	if len(*h) == 0 || (*h)[0].at > t {
		return timerEntry{}, false
	}
	return heap.Pop(h).(timerEntry), true
}

func (t *timers) pushSession(at int64, id ID)  { heap.Push(&t.sessions, timerEntry{at, id}) }
func (t *timers) pushDeadline(at int64, id ID) { heap.Push(&t.deadlines, timerEntry{at, id}) }
func (t *timers) pushHold(at int64, id ID)     { heap.Push(&t.holds, timerEntry{at, id}) }
func (t *timers) pushRemoval(at int64, id ID)  { heap.Push(&t.removals, timerEntry{at, id}) }
func (t *timers) pushTomb(at int64, id ID)     { heap.Push(&t.tombs, timerEntry{at, id}) }
