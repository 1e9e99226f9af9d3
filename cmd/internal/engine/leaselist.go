package engine

// A lease sits on two lists at once: its node's and its session's. The lists
// are intrusive, so adding and removing a lease costs no hashing and no
// allocation.
const (
	byNode    = 0
	bySession = 1
)

type leaseLink struct{ prev, next *lease }

// leaseList is a doubly linked list of leases threaded through one of their
// two links. The zero value is an empty list.
type leaseList struct {
	head *lease
	n    int
}

func (ls *leaseList) push(l *lease, w int) {
	lk := &l.links[w]
	lk.prev, lk.next = nil, ls.head
	if ls.head != nil {
		ls.head.links[w].prev = l
	}
	ls.head = l
	ls.n++
}

func (ls *leaseList) remove(l *lease, w int) {
	lk := &l.links[w]
	if lk.prev != nil {
		lk.prev.links[w].next = lk.next
	} else {
		ls.head = lk.next
	}
	if lk.next != nil {
		lk.next.links[w].prev = lk.prev
	}
	lk.prev, lk.next = nil, nil
	ls.n--
}

// all returns the leases in a slice, so the caller may end them while it
// iterates.
func (ls *leaseList) all(w int) []*lease {
	out := make([]*lease, 0, ls.n)
	for l := ls.head; l != nil; l = l.links[w].next {
		out = append(out, l)
	}
	return out
}

// Ended leases wait on a free list for the next grant, which saves an
// allocation per lease. maxFreeLeases bounds the list.
const maxFreeLeases = 256

// newLease returns a zero lease, reusing an ended one when there is one.
func (e *Engine) newLease() *lease {
	if n := len(e.freeLeases); n > 0 {
		l := e.freeLeases[n-1]
		e.freeLeases = e.freeLeases[:n-1]
		return l
	}
	return new(lease)
}

// freeLease keeps an ended lease for reuse, zeroed so that it keeps nothing
// alive. Nothing refers to a lease once it has ended: the maps and lists
// dropped it, timers and waiters hold its id.
func (e *Engine) freeLease(l *lease) {
	if len(e.freeLeases) < maxFreeLeases {
		*l = lease{}
		e.freeLeases = append(e.freeLeases, l)
	}
}
