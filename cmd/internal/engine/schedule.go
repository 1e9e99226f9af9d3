package engine

import "time"

// Status says how a consume was admitted.
type Status uint8

// The ways a consume is admitted. A refusal is an error (*DeniedError).
const (
	// Admitted: charged, act now.
	Admitted Status = iota
	// Scheduled: charged for a slot RetryAfter from now; act then.
	Scheduled
)

var statusNames = [...]string{"admitted", "scheduled"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// ConsumeOptions change how ConsumeWith admits. The zero value admits now or
// refuses.
type ConsumeOptions struct {
	// MaxWait asks for scheduled admission: when the chain's rate caps can
	// admit the amount within MaxWait (and within Settings.MaxScheduleWait)
	// but not now, the slot is booked on every rate cap of the chain, the
	// amount is charged, and the result is Scheduled. 0 admits now or
	// refuses.
	MaxWait time.Duration
	// Drain makes a refusal empty every rate cap on the chain that refused,
	// so later calls see nothing remaining until it refills: the
	// check-before, charge-after pattern.
	Drain bool
}

// Tightest is the cap on a chain with the least room for a resource.
type Tightest struct {
	Capped    bool  `json:"capped,omitempty"` // false: no cap on the chain limits the resource
	Node      ID    `json:"node,omitempty"`   // the node that holds it
	Rate      bool  `json:"rate,omitempty"`   // a rate cap; false: a quota
	Limit     int64 `json:"limit,omitempty"`
	Remaining int64 `json:"remaining,omitempty"` // what it can still admit now (after this charge)
	Reset     int64 `json:"reset,omitempty"`     // unix nanoseconds at which it is full again; 0 for a quota, which never refills
}

// ConsumeResult is what an admitted consume (or a peek) learns.
type ConsumeResult struct {
	Status     Status
	RetryAfter time.Duration // Scheduled: the wait until the booked slot
	Tightest
}

// verdict is what one walk of a chain found for a charge.
type verdict struct {
	first      *node // the first node from the bottom whose cap refuses now
	quota      bool  // a quota refuses: no wait helps
	never      bool  // a rate cap can never hold the amount
	unbookable bool  // a token bucket refuses until its window ends
	wait       int64 // the longest wait a rate cap asks, nanoseconds
	tight      Tightest
	scope      *node // the caller's scope: caps above it are not told (nil: every cap is)
}

func (v *verdict) consider(a *node, rate bool, limit, left, reset int64) {
	if !v.tight.Capped || left < v.tight.Remaining {
		v.tight = Tightest{Capped: true, Node: a.id, Rate: rate, Limit: limit, Remaining: left, Reset: reset}
	}
}

// judgeLocked walks n's chain once and says what charging amount of r at
// now would meet. Every cap on the chain judges; only those in scope (nil:
// all) can be the tightest the answer tells of. It allocates nothing.
func (e *Engine) judgeLocked(n *node, r string, amount, now int64, scope *node) verdict {
	v := verdict{scope: scope}
	told := true
	for a := n; a != nil; a, told = a.parent, told && a != scope {
		rs := a.findRes(r)
		if rs == nil {
			continue
		}
		if rs.capped {
			room, left := rs.cap-rs.used, int64(0) // both counters are 0 or more: no overflow
			if amount <= room {
				left = room - amount
			} else if amount > 0 {
				v.quota = true
				if v.first == nil {
					v.first = a
				}
			}
			if told {
				v.consider(a, false, rs.cap, left, 0)
			}
		}
		if b := rs.rate; b != nil {
			wait, never, bookable, left, reset := b.check(now, amount)
			if (never || wait > 0) && v.first == nil {
				v.first = a
			}
			v.never = v.never || never
			v.unbookable = v.unbookable || wait > 0 && !bookable
			v.wait = max(v.wait, wait)
			if told {
				v.consider(a, true, b.Limit, left, reset)
			}
		}
	}
	return v
}

// bookable reports whether a refusal made only by rate caps can become a
// booked slot within the caller's wait and the engine's ceiling.
func (e *Engine) bookable(v *verdict, maxWait time.Duration) bool {
	ceiling := min(maxWait, e.settings.MaxScheduleWait)
	return !v.quota && !v.never && !v.unbookable && v.wait <= int64(ceiling)
}

// ConsumeWith charges n units of resource to node id and every ancestor if
// every cap on the chain (quotas and rate caps) admits them, now or, with
// MaxWait, at a booked slot; otherwise it charges nothing and returns a
// *DeniedError (after draining the refusing rate caps, with Drain). n of 0
// is a peek: it charges nothing, records nothing, and returns the tightest
// cap. The time is always the engine's: nothing a caller passes moves it.
func (e *Engine) ConsumeWith(c *Call, id ID, resource string, n int64, o ConsumeOptions) (ConsumeResult, error) {
	if err := validConsume(c, resource, n, o); err != nil {
		return ConsumeResult{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, nd, err := e.callerLocked(c, id)
	if err != nil {
		return ConsumeResult{}, err
	}
	if n == 0 {
		return e.peekLocked(s, nd, resource, now)
	}
	var h uint64
	if c.Request != "" {
		h = consumeHash(id, resource, n, o)
		if m, ok, err := e.recallEntryLocked(s, c, h); err != nil || ok {
			return e.recalledConsume(s, nd, resource, m, now, err)
		}
	}
	if err := nd.activeErr(); err != nil {
		return ConsumeResult{}, err
	}
	if err := e.admitNameLocked(nd, resource, true); err != nil {
		return ConsumeResult{}, err
	}
	return e.admitLocked(s, c, h, nd, resource, n, now, o)
}

// consumeHash fingerprints a consume's arguments for its request id.
func consumeHash(id ID, resource string, n int64, o ConsumeOptions) uint64 {
	h := newHash(KindConsumed).num(int64(id)).str(resource).num(n)
	if o != (ConsumeOptions{}) {
		h = h.byte(1).num(int64(o.MaxWait)).num(boolNum(o.Drain))
	}
	return uint64(h)
}

// admitLocked charges n of resource to the active node nd's chain if its
// caps admit it now or at a bookable slot, stamped with the caller's
// session, request and argument hash h; otherwise it refuses.
func (e *Engine) admitLocked(s *session, c *Call, h uint64, nd *node, resource string, n, now int64, o ConsumeOptions) (ConsumeResult, error) {
	v := e.judgeLocked(nd, resource, n, now, scopeOf(s))
	var slot int64
	if v.first != nil {
		if !e.bookable(&v, o.MaxWait) {
			return ConsumeResult{}, e.refuseLocked(s, nd, &v, resource, n, now, o)
		}
		slot = now + v.wait
	}
	if err := e.usageRoomLocked("amount", resource, n); err != nil {
		return ConsumeResult{}, err
	}
	ev := &Event{Kind: KindConsumed, Node: nd.id, Name: resource, Amount: n, Until: slot}
	e.stampLocked(ev, s, c, h)
	if ev.Request != "" {
		first := v.tight
		ev.Answer = &first
	}
	e.emitLocked(ev, now)
	res := ConsumeResult{Tightest: v.tight}
	if slot != 0 {
		res.Status, res.RetryAfter = Scheduled, time.Duration(v.wait)
	}
	return res, nil
}

func validConsume(c *Call, resource string, n int64, o ConsumeOptions) error {
	if n < 0 {
		return invalid("amount", "must be 0 (a peek) or more, got %d", n)
	}
	if o.MaxWait < 0 {
		return invalid("max_wait", "must be 0 (admit now or refuse) or more, got %s", o.MaxWait)
	}
	if n == 0 && o != (ConsumeOptions{}) {
		return invalid("amount", "a peek (amount 0) charges nothing; max_wait and drain_over_limit need an amount of 1 or more")
	}
	if err := validKey("resource", resource); err != nil {
		return err
	}
	return validRequest(c)
}

func boolNum(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (e *Engine) peekLocked(s *session, nd *node, resource string, now int64) (ConsumeResult, error) {
	if err := nd.activeErr(); err != nil {
		return ConsumeResult{}, err
	}
	v := e.judgeLocked(nd, resource, 0, now, scopeOf(s))
	return ConsumeResult{Tightest: v.tight}, nil
}

// recalledConsume answers a repeated consume with its first answer: the
// tightest cap as it was then, and the slot it booked (0 when it was
// admitted at once), counted from now. A request remembered by a record
// older than first answers has only its slot; the chain as it is now
// stands in for the cap.
func (e *Engine) recalledConsume(s *session, nd *node, resource string, m memEntry, now int64, err error) (ConsumeResult, error) {
	if err != nil {
		return ConsumeResult{}, err
	}
	var res ConsumeResult
	if m.answer != nil {
		res.Tightest = *m.answer
	} else {
		res.Tightest = e.judgeLocked(nd, resource, 0, now, scopeOf(s)).tight
	}
	if slot := int64(m.result); slot > now {
		res.Status, res.RetryAfter = Scheduled, time.Duration(slot-now)
	}
	return res, nil
}

// refuseLocked builds the denial and, with Drain, empties the rate caps that
// refused; the denial then describes the caps as the drain left them (what
// the same call would be told right after). The drain is recorded but the
// call is not remembered: a refused call's retry is evaluated afresh.
func (e *Engine) refuseLocked(s *session, nd *node, v *verdict, resource string, n, now int64, o ConsumeOptions) error {
	err := e.denial(v, resource, n, now, o.MaxWait > 0)
	if o.Drain && err.Rate != nil {
		ev := &Event{Kind: KindRateDrained, Node: nd.id, Name: resource, Amount: n}
		if s != nil {
			ev.Session = s.id
		}
		e.emitLocked(ev, now)
		drained := e.judgeLocked(nd, resource, n, now, scopeOf(s))
		err = e.denial(&drained, resource, n, now, o.MaxWait > 0)
	}
	return err
}

// denialLocked walks n's chain and explains why amount of r does not fit at
// now.
func (e *Engine) denialLocked(n *node, r string, amount, now int64, scope *node) *DeniedError {
	v := e.judgeLocked(n, r, amount, now, scope)
	return e.denial(&v, r, amount, now, false)
}

// scopeOf is the scope of a caller's session; nil for the daemon itself.
func scopeOf(s *session) *node {
	if s == nil {
		return nil
	}
	return s.scope
}

// denial explains a verdict that refuses. With scheduled admission asked
// for, a refusal no wait can cure says NeverFits.
func (e *Engine) denial(v *verdict, r string, amount, now int64, scheduling bool) *DeniedError {
	a := v.first
	rs := a.res.get(r)
	var d *DeniedError
	if rs.capped && amount > rs.cap-rs.used {
		d = a.denied(r, rs, amount)
	} else {
		b := rs.rate
		rate := b.Rate
		_, _, _, left, reset := b.check(now, 0)
		d = &DeniedError{Node: a.id, NodeName: a.name, Resource: r, Limit: b.Limit, Requested: amount, Rate: &rate, Remaining: left, Reset: reset}
	}
	switch {
	case v.quota || v.never:
		d.NeverFits = scheduling
	default:
		d.RetryAfter = time.Duration(v.wait)
		if d.Rate != nil {
			d.Reset = now + v.wait
		}
	}
	if v.scope != nil && !a.within(v.scope) {
		return d.shared()
	}
	return d
}

func (e *Engine) applyRateDrained(ev *Event) error {
	n := e.nodes[ev.Node]
	if n == nil || n.state != Active || ev.Amount < 1 || validKey("resource", ev.Name) != nil {
		return corrupt("event %d drains unknown or ended node %d", ev.Seq, ev.Node)
	}
	for a := n; a != nil; a = a.parent {
		rs := a.res.get(ev.Name)
		if rs == nil || rs.rate == nil {
			continue
		}
		if wait, never, _, _, _ := rs.rate.check(ev.Time, ev.Amount); wait > 0 || never {
			rs.rate.drain(ev.Time)
			e.markNode(a)
		}
	}
	return nil
}
