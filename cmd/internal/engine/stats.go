package engine

// Stats is the size of the engine now: what a metrics scrape reads.
type Stats struct {
	Seq      uint64
	Nodes    int
	Active   int
	Sessions int
	Leases   int
	RateCaps int            // rate caps on nodes in the tree
	Waiting  map[string]int // queued acquires by class
}

// Stats counts nodes, sessions, leases and queued acquires. It is O(classes
// with waiters); node counting is kept up to date as nodes come and go.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := Stats{Seq: e.seq, Nodes: len(e.nodes), Sessions: len(e.sessions), Leases: len(e.leases), Waiting: make(map[string]int)}
	for class, cq := range e.queues {
		for _, tq := range cq.tenants {
			if tq.waiters > 0 {
				st.Waiting[class] += tq.waiters
			}
		}
	}
	st.Active = st.Nodes - e.endedNodes
	st.RateCaps = e.rateCaps
	return st
}
