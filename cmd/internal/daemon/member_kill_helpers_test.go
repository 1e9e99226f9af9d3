package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor"
)

// killCallTimeout bounds each call of a caller: a few times as long as a
// failover takes, so that an outcome stays unknown only when something is
// wrong or slow.
const killCallTimeout = 10 * time.Second

// charge is one consume a caller sent: its request id, its amount, and
// whether governord acknowledged it (otherwise its outcome is unknown).
type charge struct {
	task  int
	id    string
	n     int64
	acked bool
}

// grant is one lease a caller was granted. It was surely held from held
// (when Acquire returned) to until (when its Release was sent), and is still
// held when until is zero.
type grant struct {
	pool        int
	lease       *governor.Lease
	held, until time.Time
	released    bool // the Release was answered: the lease was given back
}

// ledger is what the callers of a test were told, for the checks at the
// end. Safe for concurrent use.
type ledger struct {
	t *testing.T

	mu       sync.Mutex // guards the fields below
	charges  []charge
	grants   []*grant
	unknowns map[int]int // acquires whose outcome is unknown, by pool
}

func (l *ledger) addCharge(c charge) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.charges = append(l.charges, c)
}

func (l *ledger) addGrant(g *grant) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.grants = append(l.grants, g)
}

// ended records that g's Release was sent at until and whether it was
// answered.
func (l *ledger) ended(g *grant, until time.Time, released bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g.until, g.released = until, released
}

func (l *ledger) unknownAcquire(pool int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unknowns == nil {
		l.unknowns = make(map[int]int)
	}
	l.unknowns[pool]++
}

// progress is how many consumes were acknowledged and leases granted.
func (l *ledger) progress() (acked, granted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.charges {
		if c.acked {
			acked++
		}
	}
	return acked, len(l.grants)
}

// waitProgress waits up to a minute until consumes calls more consumes
// and leases more grants were acknowledged than now.
func (l *ledger) waitProgress(consumes, leases int, what string) {
	l.t.Helper()
	a0, g0 := l.progress()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		a, g := l.progress()
		if a >= a0+consumes && g >= g0+leases {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("%s: %d consumes acknowledged and %d leases granted in a minute, want %d and %d", what, a-a0, g-g0, consumes, leases)
		}
	}
}

// caller is one of a test's concurrent callers: it consumes on its
// client's task, and acquires and releases leases of the task's pool.
type caller struct {
	name   string
	task   int             // index of its client's task
	ctx    context.Context // carries the task
	rng    *rand.Rand
	ledger *ledger
	stop   *atomic.Bool
	keeps  bool // keeps the lease it holds when stop is set, for the checks
}

// loop makes calls until stop is set.
func (c *caller) loop() {
	for seq := 0; !c.stop.Load(); seq++ {
		if c.rng.IntN(3) == 0 {
			c.useLease()
		} else {
			c.consume(seq)
		}
	}
}

// consume charges 1 to 3 units of http on the caller's task.
func (c *caller) consume(seq int) {
	ch := charge{task: c.task, id: fmt.Sprintf("%s-%d", c.name, seq), n: 1 + c.rng.Int64N(3)}
	ctx, cancel := context.WithTimeout(c.ctx, killCallTimeout)
	defer cancel()
	_, err := governor.Consume(governor.WithRequestID(ctx, ch.id), "http", ch.n)
	switch {
	case err == nil:
		ch.acked = true
	case !errors.Is(err, governor.ErrOutcomeUnknown):
		c.ledger.t.Errorf("%s: consume %s: %v", c.name, ch.id, err)
		return
	}
	c.ledger.addCharge(ch)
}

// useLease acquires a lease of the task's pool, waiting in the queue,
// holds it a moment, checks it is valid and releases it.
func (c *caller) useLease() {
	ctx, cancel := context.WithTimeout(c.ctx, killCallTimeout)
	defer cancel()
	l, err := governor.Acquire(ctx, "slot")
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, governor.ErrOutcomeUnknown) {
			c.ledger.t.Errorf("%s: acquire: %v", c.name, err)
		}
		c.ledger.unknownAcquire(c.task)
		return
	}
	g := &grant{pool: c.task, lease: l, held: time.Now()}
	c.ledger.addGrant(g)
	time.Sleep(time.Duration(c.rng.IntN(5)) * time.Millisecond)
	c.validate(l)
	if c.keeps && c.stop.Load() {
		return
	}
	until := time.Now()
	err = l.Release(governor.Report{})
	if err != nil && !errors.Is(err, governor.ErrOutcomeUnknown) {
		c.ledger.t.Errorf("%s: release lease %d: %v", c.name, l.ID, err)
	}
	c.ledger.ended(g, until, err == nil)
}

// validate checks that l, held, validates. A validate that no member
// answered in time (the leader was just killed) tells nothing.
func (c *caller) validate(l *governor.Lease) {
	ctx, cancel := context.WithTimeout(c.ctx, killCallTimeout)
	defer cancel()
	if err := l.Validate(ctx); err != nil && !errors.Is(err, governor.ErrUnavailable) && ctx.Err() == nil {
		c.ledger.t.Errorf("%s: lease %d, held, does not validate: %v", c.name, l.ID, err)
	}
}

// mostHeld is the most leases of pool surely held at one moment: each from
// its grant's answer to the sending of its release. Where one ends as
// another begins, the end counts first.
func mostHeld(grants []*grant, pool int) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, g := range grants {
		if g.pool != pool {
			continue
		}
		edges = append(edges, edge{g.held, 1})
		if !g.until.IsZero() {
			edges = append(edges, edge{g.until, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta))
	})
	held, most := 0, 0
	for _, e := range edges {
		held += e.delta
		most = max(most, held)
	}
	return most
}
