package engine

import (
	"math/bits"
	"time"
)

// instant is a time with a fraction of a nanosecond: ns + rem/limit, with
// 0 ≤ rem < limit. A leaky bucket's one unit takes period/limit nanoseconds,
// which is rarely whole; carrying the remainder keeps the arithmetic exact at
// any call rate.
type instant struct {
	ns  int64
	rem int64
}

func (a instant) after(b instant) bool { return a.ns > b.ns || a.ns == b.ns && a.rem > b.rem }

// ceil is the first whole nanosecond at or after a.
func (a instant) ceil() int64 {
	if a.rem > 0 {
		return a.ns + 1
	}
	return a.ns
}

// bucket is the state of one rate cap on one node. All fields are guarded by
// Engine.mu.
type bucket struct {
	Rate
	loc *time.Location // Zone, resolved

	// Leaky bucket: the emission interval T = q + r/limit nanoseconds, the
	// burst tolerance tau = burst × T, and the theoretical arrival time: the
	// bucket is full at tat, and in debt while tat is after now + tau.
	q, r int64
	tau  instant
	tat  instant

	// Token bucket: what the window ending at end has charged. A window
	// opens at the first charge after the previous one ended.
	used int64
	end  int64
}

func newBucket(r Rate, loc *time.Location) *bucket {
	b := &bucket{Rate: r, loc: loc}
	if r.Algorithm == LeakyBucket {
		b.q, b.r = int64(r.Period)/r.Limit, int64(r.Period)%r.Limit
		b.tau = b.plus(instant{}, r.burst())
	}
	return b
}

// plus returns t + n×T. n is at most a burst, so nothing overflows.
func (b *bucket) plus(t instant, n int64) instant {
	rem := t.rem + n*b.r
	return instant{ns: t.ns + n*b.q + rem/b.Limit, rem: rem % b.Limit}
}

// base is when the bucket's charges so far are paid off, seen at now.
func (b *bucket) base(now int64) instant {
	if b.tat.ns < now {
		return instant{ns: now}
	}
	return b.tat
}

// missing returns how many units a leaky bucket lacks at now for a bucket
// that is full at full, as whole units and a remainder in 1/period units.
func (b *bucket) missing(full instant, now int64) (whole, frac uint64) {
	gap := instant{ns: full.ns - now, rem: full.rem}
	if gap.ns < 0 {
		return 0, 0
	}
	hi, lo := bits.Mul64(uint64(gap.ns), uint64(b.Limit))
	lo, carry := bits.Add64(lo, uint64(gap.rem), 0)
	hi += carry
	period := uint64(b.Period)
	if hi >= period {
		return 1 << 62, 0 // far beyond any burst
	}
	return bits.Div64(hi, lo, period)
}

// remainingAt is what a leaky bucket full at full can still admit at now.
func (b *bucket) remainingAt(full instant, now int64) int64 {
	whole, frac := b.missing(full, now)
	if frac > 0 {
		whole++
	}
	if burst := uint64(b.burst()); whole < burst {
		return int64(burst - whole)
	}
	return 0
}

// window returns the token bucket's window seen at now: what it has charged
// and when it ends.
func (b *bucket) window(now int64) (used, end int64) {
	if b.end != 0 && now < b.end {
		return b.used, b.end
	}
	if b.Calendar != NoCalendar {
		return 0, calendarEnd(now, b.Calendar, b.loc)
	}
	return 0, now + int64(b.Period)
}

// check says what charging n at now would do: the wait before the slot
// (0: now), whether n can never fit, what would remain and when the bucket
// is next full again (token bucket: its window's end). A token bucket cannot
// book: it reports a wait until its window ends, with booked false.
func (b *bucket) check(now, n int64) (wait int64, never, bookable bool, remaining, reset int64) {
	if b.Algorithm == TokenBucket {
		used, end := b.window(now)
		switch {
		case n > b.Limit:
			return 0, true, false, max(b.Limit-used, 0), end
		case used+n > b.Limit:
			return end - now, false, false, max(b.Limit-used, 0), end
		}
		return 0, false, true, b.Limit - used - n, end
	}
	base := b.base(now)
	if n > b.burst() {
		return 0, true, false, b.remainingAt(base, now), base.ceil()
	}
	next := b.plus(base, n)
	limit := instant{ns: now + b.tau.ns, rem: b.tau.rem}
	if !next.after(limit) {
		return 0, false, true, b.remainingAt(next, now), next.ceil()
	}
	over := instant{ns: next.ns - limit.ns, rem: next.rem - limit.rem}
	if over.rem < 0 {
		over.ns, over.rem = over.ns-1, over.rem+b.Limit
	}
	return over.ceil(), false, true, 0, next.ceil()
}

// charge applies n units charged at time at for a slot at slot (slot == at
// unless the charge was booked for later). A leaky bucket counts the units
// from the slot on, so a unit booked for later never makes room for anyone
// before it; a token bucket counts them in the window open at at.
func (b *bucket) charge(at, slot, n int64) {
	if b.Algorithm == TokenBucket {
		b.used, b.end = b.window(at)
		b.used += n
		return
	}
	base := b.tat
	if base.ns < slot {
		base = instant{ns: slot}
	}
	b.tat = b.plus(base, n)
}

// drain empties the bucket at now without putting it in debt.
func (b *bucket) drain(now int64) {
	if b.Algorithm == TokenBucket {
		b.used, b.end = b.window(now)
		b.used = max(b.used, b.Limit)
		return
	}
	if full := (instant{ns: now + b.tau.ns, rem: b.tau.rem}); full.after(b.tat) {
		b.tat = full
	}
}

// reset makes the bucket full and forgives its debt.
func (b *bucket) reset() {
	b.tat, b.used, b.end = instant{}, 0, 0
}

// inDebt reports whether units are booked beyond what the bucket holds.
func (b *bucket) inDebt(now int64) bool {
	return b.Algorithm == LeakyBucket && b.tat.after(instant{ns: now + b.tau.ns, rem: b.tau.rem})
}

// retune returns the bucket that carries b's state into the new rate r at
// now. A token bucket keeps its window and what it charged. A leaky bucket
// in debt keeps the moment its debt clears, so every booked slot keeps its
// time and no newcomer goes before it; otherwise it keeps the units it
// lacks, so remaining moves by the change of burst and never below zero.
// A change of algorithm or calendar starts a full bucket.
func (b *bucket) retune(r Rate, loc *time.Location, now int64) *bucket {
	nb := newBucket(r, loc)
	if r == b.Rate {
		nb.tat, nb.used, nb.end = b.tat, b.used, b.end
		return nb
	}
	if r.Algorithm != b.Algorithm || r.Calendar != b.Calendar || r.Zone != b.Zone {
		return nb
	}
	if r.Algorithm == TokenBucket {
		nb.used, nb.end = b.used, b.end
		return nb
	}
	if b.inDebt(now) {
		clears := instant{ns: b.tat.ns - b.tau.ns, rem: b.tat.rem - b.tau.rem}
		if clears.rem < 0 {
			clears.ns, clears.rem = clears.ns-1, clears.rem+b.Limit
		}
		nb.tat = nb.plus(instant{ns: clears.ceil()}, nb.burst())
		return nb
	}
	whole, frac := b.missing(b.base(now), now)
	if whole >= uint64(nb.burst()) {
		nb.tat = instant{ns: now + nb.tau.ns, rem: nb.tau.rem}
		return nb
	}
	t := nb.plus(instant{ns: now}, int64(whole))
	// frac/old period of a unit, in 1/new limit nanoseconds: frac × new period / old period.
	hi, lo := bits.Mul64(frac, uint64(r.Period))
	part, left := bits.Div64(hi, lo, uint64(b.Period))
	if left > 0 {
		part++
	}
	rem := t.rem + int64(part)
	nb.tat = instant{ns: t.ns + rem/r.Limit, rem: rem % r.Limit}
	return nb
}
