package engine

import (
	"cmp"
	"fmt"
	"slices"
)

// limitBindings lists the limits of class c on n's chain that are full now,
// each with its holders and the bound on when the slot needed frees. place
// is the acquire's place in its tenant's queue: that many slots must free.
func (e *Engine) limitBindings(n, scope *node, c string, place int) []Binding {
	var out []Binding
	for a := n; a != nil; a = a.parent {
		cs := a.cls[c]
		if cs == nil || !cs.limited || cs.held < cs.limit {
			continue
		}
		b := reveal(a, scope, Binding{Kind: CapLimit, Used: cs.held, Limit: cs.limit})
		if !b.Shared {
			hs := holdersOf(a, c)
			b.bound, b.why = slotBound(a, hs, cs.held-cs.limit+int64(place))
			b.Holders = hs[:min(len(hs), MaxHolders)]
			b.MoreHolders = int(cs.held) - len(b.Holders)
		}
		out = append(out, b)
	}
	return out
}

// holdersOf returns leases of class c held on a's subtree, earliest to end
// first and unbounded ones last. It searches at most maxExplainNodes nodes
// and looks at at most maxExplainNodes leases, so a huge subtree costs no
// more than a small one.
func holdersOf(a *node, c string) []Holder {
	var out []Holder
	stack := []*node{a}
	seen, looked := 0, 0
	for len(stack) > 0 && seen < maxExplainNodes && looked < maxExplainNodes {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		seen++
		for l := n.leases.head; l != nil && looked < maxExplainNodes; l = l.links[byNode].next {
			looked++
			if l.class == c {
				out = append(out, l.holder())
			}
		}
		for ch := range n.order.all() {
			if len(stack)+seen >= maxExplainNodes {
				break
			}
			stack = append(stack, ch)
		}
	}
	slices.SortFunc(out, endsBefore)
	return out
}

// endsBefore orders holders by the instant they must end by, unbounded
// ones last, then by lease.
func endsBefore(a, b Holder) int {
	if (a.EndsBy == 0) != (b.EndsBy == 0) {
		return cmp.Compare(b.EndsBy, a.EndsBy) // 0 (unbounded) after any instant
	}
	return cmp.Or(cmp.Compare(a.EndsBy, b.EndsBy), cmp.Compare(a.Lease, b.Lease))
}

// holder describes l with the earliest instant it must end by.
func (l *lease) holder() Holder {
	h := Holder{Lease: l.id, Node: l.node.id, NodeName: l.node.name, Session: l.session.id, Granted: l.granted}
	h.consider(l.until, BasisMaxHold)
	h.consider(l.node.eff, BasisDeadline)
	if s := l.session; s.ttl > 0 {
		h.consider(s.expires, BasisSessionExpiry)
	}
	return h
}

func (h *Holder) consider(at int64, why BasisKind) {
	if at != 0 && (h.EndsBy == 0 || at < h.EndsBy) {
		h.EndsBy, h.Basis = at, why
	}
}

// slotBound is when need slots of a's full limit have freed at the latest:
// the end of the need-th holder to end, if that one has a bound.
func slotBound(a *node, hs []Holder, need int64) (Basis, string) {
	if need < 1 {
		need = 1
	}
	if need > int64(len(hs)) || hs[need-1].EndsBy == 0 {
		return Basis{}, fmt.Sprintf("the limit on %q needs %d slot(s) freed and its holders have no max hold, deadline or session expiry that frees them", a.name, need)
	}
	h := hs[need-1]
	return Basis{Kind: h.Basis, Node: a.id, Lease: h.Lease, At: h.EndsBy}, ""
}

// waitInfo describes the acquires of class c queued on n itself, or returns
// nil when there are none.
func (e *Engine) waitInfo(n, scope *node, c string) *WaitInfo {
	cs := n.cls[c]
	if cs == nil || cs.group == nil || cs.group.n == 0 {
		return nil
	}
	g := cs.group
	tq := g.tq
	w := &WaitInfo{Waiters: g.n, Weight: tq.tenant.weightOrOne(), Tenants: tq.cq.size}
	if tq.tenant.within(scope) {
		w.Tenant = tq.tenant.id
	}
	h := &tq.ready
	if at := g.parkedAt; at != nil {
		w.Parked = true
		if at.within(scope) {
			w.ParkedAt = at.id
		}
		h = &at.cls[c].parked
	}
	w.Place = 1 + waitersAhead(*h, g)
	w.Rotation = rotationPlace(tq)
	return w
}

// waitersAhead counts the waiters of groups on g's heap that are served
// before g, looking at no more than maxExplainScan groups.
func waitersAhead(h groupHeap, g *group) int {
	ahead := 0
	for i, o := range h {
		if i == maxExplainScan {
			break
		}
		if o != g && h.Less(o.idx, g.idx) {
			ahead += o.n
		}
	}
	return ahead
}

// rotationPlace is the tenant's place in its class's ring from the cursor,
// 1 being served next; 0 when it is out of the ring or further than
// maxExplainScan.
func rotationPlace(tq *tenantQueue) int {
	if !tq.inRing {
		return 0
	}
	t := tq.cq.cursor
	for i := 1; i <= maxExplainScan && i <= tq.cq.size; i++ {
		if t == tq {
			return i
		}
		t = t.next
	}
	return 0
}
