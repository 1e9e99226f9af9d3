package engine

import "fmt"

// checkBounds recounts, from the tree, the sessions and the queues, what
// each tenant holds against its bounds, and compares it with the counts the
// engine keeps as things change.
func checkBounds(e *Engine) error {
	want := make(map[*node]*Bounds)
	names := make(map[*node]map[string]bool)
	for t := range e.root.order.all() {
		if t.usage == nil {
			return fmt.Errorf("bounds: tenant node %d keeps no counts", t.id)
		}
		want[t], names[t] = &Bounds{}, make(map[string]bool)
		want[t][BoundWatches] = t.usage.held[BoundWatches] // the server's streams: nothing in the tree to recount
	}
	for _, n := range e.nodes {
		if n == e.root {
			continue
		}
		w := want[n.tenant]
		if n != n.tenant {
			w[BoundNodes]++
		}
		for r := range n.res.all() {
			if !e.bounds.declared[r] {
				names[n.tenant]["r:"+r] = true
			}
		}
		for c := range n.cls {
			if !e.bounds.declared[c] {
				names[n.tenant]["c:"+c] = true
			}
		}
	}
	for _, s := range e.sessions {
		if s.scope != e.root {
			want[s.scope.tenant][BoundSessions]++
		}
		for _, w := range s.waiters {
			if w.node != e.root {
				want[w.node.tenant][BoundQueued]++
			}
		}
	}
	for t, w := range want {
		w[BoundNames] = int64(len(names[t]))
		if *w != t.usage.held {
			return fmt.Errorf("bounds: tenant %q holds %v by the tree but its counts say %v", t.name, *w, t.usage.held)
		}
	}
	return nil
}
