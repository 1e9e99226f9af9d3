package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/testclock"
)

// historySize returns how many histories of how many steps to run: 40 x 1,500
// by default, 1,000 x 5,000 with GOVERNOR_LONG=1, or GOVERNOR_HISTORIES and
// GOVERNOR_STEPS.
func historySize() (histories, steps int) {
	histories, steps = 40, 1500
	if os.Getenv("GOVERNOR_LONG") == "1" {
		histories, steps = 1000, 5000
	}
	if v, err := strconv.Atoi(os.Getenv("GOVERNOR_HISTORIES")); err == nil {
		histories = v
	}
	if v, err := strconv.Atoi(os.Getenv("GOVERNOR_STEPS")); err == nil {
		steps = v
	}
	return histories, steps
}

// TestRandomHistories drives the engine through random operations, checks all
// nine invariants after every step, then replays each history three ways
// (events only, mid-run snapshot plus later events, final snapshot) and
// compares the result with the live engine field by field. Between them the
// histories must forget idle keys, so that replay is seen to forget them too.
// Each history gives its events back for reuse every 1 to 64 events, as the
// record's writer does after each commit.
func TestRandomHistories(t *testing.T) {
	histories, steps := historySize()
	var forgotten, stepped, refused atomic.Int64
	t.Cleanup(func() {
		if histories*steps >= 10_000 && refused.Load() == 0 {
			t.Errorf("no history refused a call past a bound")
		}
		if histories*steps >= 10_000 && forgotten.Load() == 0 {
			t.Errorf("no history forgot an idle key")
		}
		if histories*steps >= 10_000 && stepped.Load() == 0 {
			t.Errorf("no history ended a subtree in steps")
		}
		t.Logf("idle keys forgotten: %d; nodes ended in later steps: %d", forgotten.Load(), stepped.Load())
	})
	for seed := range histories {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			t.Parallel()
			h := newHistory(t, uint64(seed))
			if seed%3 == 1 {
				h.e.endStep = 2 // every subtree of two nodes or more ends in steps
			}
			h.run(steps)
			h.checkReplays()
			refused.Add(h.refusals())
			for _, ev := range h.rec.events {
				switch ev.Kind {
				case KindKeysForgotten:
					forgotten.Add(int64(len(ev.IDs)))
				case KindNodesEnded:
					stepped.Add(int64(len(ev.IDs)))
				}
			}
		})
	}
}

// history is one random run and everything needed to check it.
type history struct {
	t     *testing.T
	rng   *rand.Rand
	clock *testclock.Clock
	rec   *recorder
	aud   *auditor
	e     *Engine
	base  *Snapshot // the empty engine, before any event

	tenants  []ID
	sessions []ID
	scopes   map[ID]ID // session -> scope
	nodes    []ID      // every node ever created, ended or not
	leases   []ID      // every lease ever granted
	waiters  []*pending
	requests []requestUse
	tokens   int

	bounds   BoundsConfig // set on the live engine and on every rebuilt one, as a restarted daemon does
	image    *Image
	mid      *Snapshot // encoded and decoded mid-run snapshot
	step     int
	lastStep string
}

type pending struct {
	w       *Waiter
	session ID
}

type requestUse struct {
	session ID
	id      string
	op      func(c *Call) error
}

func newHistory(t *testing.T, seed uint64) *history {
	h := &history{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), clock: newFakeClock(), scopes: make(map[ID]ID)}
	h.rec = &recorder{every: 1 + h.rng.IntN(64)}
	h.e = New(Options{Clock: h.clock, Sink: h.rec})
	h.rec.recycle = h.e
	h.base = h.e.Dump()
	h.aud = newAuditor(h.e)
	h.rec.audit = h.aud.check
	h.image = NewImage(nil)
	sys := &Call{}
	for i := range 3 {
		spec := Spec{Name: fmt.Sprint("tenant-", i), Weight: int32(1 + h.rng.IntN(3)),
			Quotas: map[string]int64{"http": int64(40 + h.rng.IntN(80))}, Limits: map[string]int64{"db": int64(1 + h.rng.IntN(3))},
			Rates: h.randomRates()}
		inf, err := h.e.Create(sys, RootID, spec)
		if err != nil {
			t.Fatal(err)
		}
		h.tenants = append(h.tenants, inf.ID)
		h.nodes = append(h.nodes, inf.ID)
	}
	must(t, h.e.SetLimit(sys, RootID, "db", ptr(4)))
	must(t, h.e.SetQuota(sys, RootID, "http", ptr(200)))
	must(t, h.e.SetRate(sys, RootID, "retry", &Rate{Limit: 20, Period: 3 * time.Second, Burst: 6, Algorithm: LeakyBucket}))
	set := DefaultSettings()
	set.KeyIdle = 2 * time.Second
	must(t, h.e.Configure(sys, set))
	if seed%2 == 0 { // tenant-0 is kept tight, and the others must not feel it
		tight := Bounds{BoundNodes: 12, BoundNames: 3, BoundSessions: 3, BoundWatches: 1, BoundQueued: 1}
		h.bounds = BoundsConfig{Default: DefaultBounds(), PerTenant: map[ID]Bounds{h.tenants[0]: tight}, Declared: []string{"http"}}
		must(t, h.e.SetBounds(h.bounds))
	}
	for range 4 {
		h.openSession()
	}
	return h
}

// refusals counts the calls the tenants' bounds refused.
func (h *history) refusals() int64 {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	var n int64
	for t := range h.e.root.order.all() {
		for _, r := range t.usage.refused {
			n += int64(r)
		}
	}
	return n
}

func (h *history) pick(ids []ID) ID {
	if len(ids) == 0 {
		return 0
	}
	return ids[h.rng.IntN(len(ids))]
}

// live returns a session that is still open (opening one when too few are),
// or now and then any session ever opened.
func (h *history) live() ID {
	h.e.mu.Lock()
	alive := h.sessions[:0:0]
	for _, s := range h.sessions {
		if h.e.sessions[s] != nil {
			alive = append(alive, s)
		}
	}
	h.e.mu.Unlock()
	if len(alive) < 3 {
		h.openSession()
		return h.sessions[len(h.sessions)-1]
	}
	if h.rng.IntN(20) == 0 {
		return h.pick(h.sessions)
	}
	return h.pick(alive)
}

// nodeFor returns mostly an active node inside the session's scope, and now
// and then any node ever created.
func (h *history) nodeFor(s ID) ID {
	if h.rng.IntN(8) == 0 {
		return h.pick(h.nodes)
	}
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	scope := h.e.nodes[h.scopes[s]]
	var in []ID
	for _, id := range h.nodes {
		if n := h.e.nodes[id]; n != nil && n.state == Active && (scope == nil || n.within(scope)) {
			in = append(in, id)
		}
	}
	if len(in) == 0 {
		return h.pick(h.nodes)
	}
	return in[h.rng.IntN(len(in))]
}

func (h *history) openSession() {
	h.tokens++
	scope := h.pick(h.tenants)
	if h.rng.IntN(8) == 0 {
		scope = RootID
	}
	ttl := time.Duration(5+h.rng.IntN(30)) * time.Second
	inf, err := h.e.OpenSession(&Call{}, scope, ttl, token(h.tokens))
	if err != nil {
		return
	}
	h.sessions = append(h.sessions, inf.ID)
	h.scopes[inf.ID] = scope
}

// call returns a call by a random session, sometimes with a request id.
func (h *history) call(s ID) *Call {
	c := &Call{Session: s}
	if h.rng.IntN(3) == 0 {
		c.Request = fmt.Sprint("r", h.rng.IntN(40))
	}
	return c
}

func (h *history) run(steps int) {
	ops := []struct {
		weight int
		name   string
		fn     func()
	}{
		{10, "create", h.opCreate}, {4, "ensure", h.opEnsure}, {20, "consume", h.opConsume},
		{12, "acquire", h.opAcquire}, {10, "release", h.opRelease}, {3, "abandon", h.opAbandon},
		{3, "end", h.opEnd}, {3, "session", h.opSession}, {6, "heartbeat", h.opHeartbeat},
		{6, "advance", h.opAdvance}, {3, "reap", h.opReap}, {5, "edit", h.opEdit},
		{2, "defaults", h.opDefaults}, {4, "outside", h.opOutside}, {3, "validate", h.opValidate},
		{3, "repeat", h.opRepeat}, {1, "settings", h.opSettings}, {2, "describe", h.opDescribe},
		{8, "keyed", h.opKeyed},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	for h.step = 0; h.step < steps; h.step++ {
		r := h.rng.IntN(total)
		for _, o := range ops {
			if r < o.weight {
				h.lastStep = o.name
				o.fn()
				break
			}
			r -= o.weight
		}
		h.drainWaiters()
		h.checkStep()
		if h.step == steps/2 {
			h.mid = h.snapshotRoundTrip()
		} else if h.step%97 == 0 {
			h.image.Apply(h.e.Capture())
		}
	}
}

func (h *history) checkStep() {
	h.t.Helper()
	if h.aud.err != nil {
		h.t.Fatalf("step %d (%s): %v", h.step, h.lastStep, h.aud.err)
	}
	if err := checkState(h.e); err != nil {
		h.t.Fatalf("step %d (%s): %v", h.step, h.lastStep, err)
	}
}

// snapshotRoundTrip captures through the image, as the daemon does, and
// returns the snapshot after a trip through its stored form.
func (h *history) snapshotRoundTrip() *Snapshot {
	h.image.Apply(h.e.Capture())
	data, err := h.image.Snapshot().Encode()
	must(h.t, err)
	st, err := DecodeSnapshot(data)
	must(h.t, err)
	return st
}

func (h *history) drainWaiters() {
	keep := h.waiters[:0]
	for _, p := range h.waiters {
		select {
		case g := <-p.w.C():
			if g.Err == nil {
				h.leases = append(h.leases, g.Lease.ID)
			}
		default:
			keep = append(keep, p)
		}
	}
	h.waiters = keep
}

func (h *history) randomCaps(keys ...string) map[string]int64 {
	if h.rng.IntN(2) == 0 {
		return nil
	}
	m := make(map[string]int64)
	for _, k := range keys {
		if h.rng.IntN(2) == 0 {
			m[k] = int64(h.rng.IntN(30))
		}
	}
	return m
}

func (h *history) randomSpec(name string) Spec {
	sp := Spec{Name: name, Quotas: h.randomCaps("http", "retry"), Limits: h.randomCaps("db", "agents"),
		Rates: h.randomRates(), Priority: int32(h.rng.IntN(3)), Weight: int32(h.rng.IntN(3))}
	if h.rng.IntN(5) == 0 {
		sp.Deadline = h.clock.Now().Add(time.Duration(1+h.rng.IntN(20)) * time.Second).UnixNano()
	}
	sp.Detached = h.rng.IntN(3) == 0
	if h.rng.IntN(4) == 0 {
		sp.Retention = time.Duration(h.rng.IntN(30)) * time.Second
	}
	return sp
}

func (h *history) opCreate() {
	s := h.live()
	parent := h.nodeFor(s)
	if h.rng.IntN(4) == 0 {
		parent = 0
	}
	inf, err := h.e.Create(h.call(s), parent, h.randomSpec(fmt.Sprint("n", h.step)))
	if err == nil {
		h.nodes = append(h.nodes, inf.ID)
	}
}

func (h *history) opEnsure() {
	s := h.live()
	var ch *Charge
	if h.rng.IntN(2) == 0 {
		ch = &Charge{Resource: "agents", Amount: 1}
	}
	inf, created, err := h.e.Ensure(h.call(s), h.nodeFor(s), h.randomSpec(fmt.Sprint("run", h.rng.IntN(4))), ch)
	if err == nil && created {
		h.nodes = append(h.nodes, inf.ID)
	}
}

// randomRates returns no rate cap, or a token or leaky bucket on http or
// retry, now and then a calendar window.
func (h *history) randomRates() map[string]Rate {
	if h.rng.IntN(3) == 0 {
		return nil
	}
	return map[string]Rate{[]string{"http", "retry"}[h.rng.IntN(2)]: h.randomRate()}
}

func (h *history) randomRate() Rate {
	limit := int64(1 + h.rng.IntN(12))
	period := time.Duration(1+h.rng.IntN(4000)) * time.Millisecond
	switch h.rng.IntN(4) {
	case 0:
		return Rate{Limit: limit, Period: period}
	case 1:
		return Rate{Limit: limit, Calendar: []Calendar{Minute, Hour}[h.rng.IntN(2)], Zone: "Asia/Kolkata"}
	}
	return Rate{Limit: limit, Period: period, Burst: int64(h.rng.IntN(8)), Algorithm: LeakyBucket}
}

func (h *history) opConsume() {
	s := h.live()
	n := h.nodeFor(s)
	amount := int64(1 + h.rng.IntN(5))
	res := []string{"http", "retry", "agents"}[h.rng.IntN(3)]
	c := h.call(s)
	var o ConsumeOptions
	switch h.rng.IntN(4) {
	case 0:
		o.MaxWait = time.Duration(h.rng.IntN(20_000)) * time.Millisecond
	case 1:
		o.Drain = true
	case 2:
		h.peek(c, n, res)
		return
	}
	h.remember(c, func(c *Call) error {
		_, err := h.e.ConsumeWith(c, n, res, amount, o)
		return err
	})
}

// peek must charge nothing: it may record only what time decided (a
// deadline's end and what that frees), never a charge or a drain.
func (h *history) peek(c *Call, n ID, res string) {
	before := h.e.Seq()
	_, err := h.e.ConsumeWith(&Call{Session: c.Session}, n, res, 0, ConsumeOptions{})
	for _, ev := range h.rec.events[before:] {
		if ev.Kind == KindConsumed || ev.Kind == KindRateDrained {
			h.t.Fatalf("step %d: a peek (%v) recorded event %d (%s)", h.step, err, ev.Seq, ev.Kind)
		}
	}
}

// remember runs op and keeps it, so opRepeat can repeat it with the same id.
func (h *history) remember(c *Call, op func(c *Call) error) {
	before := h.e.Seq()
	err := op(c)
	if c.Request != "" {
		h.requests = append(h.requests, requestUse{session: c.Session, id: c.Request, op: op})
	}
	if errors.Is(err, ErrRequestMismatch) && h.e.Seq() != before && h.lastStep != "advance" {
		h.expectUnchangedAfterMismatch(before)
	}
}

// queuedBefore reports whether ev grants an acquire that was queued before
// the step: time freed a slot, and the call that was refused let the queue
// serve it on its way out.
func (h *history) queuedBefore(ev *Event) bool {
	for _, p := range h.waiters {
		if ev.Kind == KindLeaseGranted && p.session == ev.Session && p.w.req == ev.Request {
			return true
		}
	}
	return false
}

func (h *history) expectUnchangedAfterMismatch(before uint64) {
	for _, ev := range h.rec.events[before:] {
		if ev.Session != 0 && ev.Request != "" && !h.queuedBefore(ev) {
			h.t.Fatalf("step %d: a mismatched request id applied event %d", h.step, ev.Seq)
		}
	}
}

func (h *history) opAcquire() {
	s := h.live()
	n := h.nodeFor(s)
	class := []string{"db", "agents"}[h.rng.IntN(2)]
	var hold time.Duration
	if h.rng.IntN(3) == 0 {
		hold = time.Duration(1+h.rng.IntN(5)) * time.Second
	}
	l, w, err := h.e.Acquire(h.call(s), n, class, hold)
	switch {
	case err != nil:
	case w != nil:
		h.waiters = append(h.waiters, &pending{w: w, session: s})
	default:
		h.leases = append(h.leases, l.ID)
	}
}

func (h *history) opRelease() {
	s := h.live()
	l := h.pick(h.leases)
	if h.rng.IntN(10) == 0 {
		l = ID(h.rng.IntN(2000))
	}
	rep := Report{LatencyNanos: int64(h.rng.IntN(1000)), Overloaded: h.rng.IntN(5) == 0}
	c := h.call(s)
	h.remember(c, func(c *Call) error { _, err := h.e.Release(c, l, rep); return err })
}

func (h *history) opAbandon() {
	if len(h.waiters) == 0 {
		return
	}
	i := h.rng.IntN(len(h.waiters))
	p := h.waiters[i]
	h.e.Abandon(&Call{Session: p.session}, p.w)
	h.waiters = append(h.waiters[:i], h.waiters[i+1:]...)
	select {
	case <-p.w.C():
	default:
	}
}

func (h *history) opEnd() {
	s := h.live()
	n := h.nodeFor(s)
	c := h.call(s)
	if h.rng.IntN(2) == 0 {
		h.remember(c, func(c *Call) error { return h.e.Cancel(c, n) })
	} else {
		h.remember(c, func(c *Call) error { return h.e.Close(c, n) })
	}
}

func (h *history) opSession() {
	if h.rng.IntN(2) == 0 {
		h.openSession()
		return
	}
	_ = h.e.CloseSession(&Call{Session: h.live()})
}

func (h *history) opHeartbeat() { _, _ = h.e.Heartbeat(&Call{Session: h.live()}) }

func (h *history) opAdvance() {
	h.clock.Advance(time.Duration(h.rng.IntN(800)) * time.Millisecond)
}

func (h *history) opReap() { h.e.Reap(&Call{}) }

func (h *history) opEdit() {
	s := h.live()
	n := h.nodeFor(s)
	var v *int64
	if h.rng.IntN(4) != 0 {
		v = ptr(int64(h.rng.IntN(20)))
	}
	c := &Call{Session: s}
	if h.rng.IntN(3) == 0 {
		h.editRate(c, n)
		return
	}
	if h.rng.IntN(2) == 0 {
		res := []string{"http", "retry"}[h.rng.IntN(2)]
		if h.e.SetQuota(c, n, res, v) == nil {
			q := h.describe(n).Quotas[res]
			h.expectCap("quota "+res, n, v, q.Capped, q.Cap)
		}
		return
	}
	class := []string{"db", "agents"}[h.rng.IntN(2)]
	if h.e.SetLimit(c, n, class, v) == nil {
		l := h.describe(n).Limits[class]
		h.expectCap("limit "+class, n, v, l.Limited, l.Limit)
	}
}

// editRate sets, removes or resets a rate cap, and checks it reads back.
func (h *history) editRate(c *Call, n ID) {
	res := []string{"http", "retry"}[h.rng.IntN(2)]
	if h.rng.IntN(3) == 0 {
		_ = h.e.ResetRate(c, n, res)
		return
	}
	var r *Rate
	if h.rng.IntN(4) != 0 {
		rr := h.randomRate()
		r = &rr
	}
	if h.e.SetRate(c, n, res, r) == nil {
		got, ok := h.describe(n).Rates[res]
		if ok != (r != nil) || r != nil && got.Rate != *r {
			h.t.Fatalf("step %d: node %d's %s rate reads back as %+v after setting %+v", h.step, n, res, got, r)
		}
	}
}

func (h *history) describe(n ID) NodeInfo {
	inf, _, _, err := h.e.Describe(&Call{}, n, nil)
	must(h.t, err)
	return inf
}

// expectCap checks that an edit reads back as it was written: a value, or no
// cap at all.
func (h *history) expectCap(what string, n ID, v *int64, capped bool, got int64) {
	if (v == nil) == capped || v != nil && *v != got {
		h.t.Fatalf("step %d: node %d's %s reads back as capped=%v %d after setting %v", h.step, n, what, capped, got, v)
	}
}

func (h *history) opDefaults() {
	d := Defaults{Caps: Caps{Quotas: h.randomCaps("http", "agents"), Limits: h.randomCaps("db"), Rates: h.randomRates()}}
	if h.rng.IntN(2) == 0 {
		d.Children = &Caps{Quotas: h.randomCaps("http")}
	}
	s := h.live()
	n := h.nodeFor(s)
	c := h.call(s)
	h.remember(c, func(c *Call) error { return h.e.SetDefaults(c, n, d) })
}

// opOutside makes a call outside the session's scope on purpose: it must be
// refused and change nothing but take the decisions of time already due,
// as every call does first; those are taken before it, so it must change
// nothing at all.
func (h *history) opOutside() {
	s := h.live()
	scope := h.scopes[s]
	if scope == RootID || scope == 0 {
		return
	}
	var target ID
	for _, t := range h.tenants {
		if t != scope {
			target = t
			break
		}
	}
	h.takeDue()
	before := h.e.Seq()
	queued := h.queued()
	c := &Call{Session: s}
	var err error
	switch h.rng.IntN(6) {
	case 0:
		err = h.e.Consume(c, target, "http", 1)
	case 1:
		_, _, err = h.e.Acquire(c, target, "db", 0)
	case 2:
		_, err = h.e.Create(c, target, Spec{Name: "intruder"})
	case 3:
		err = h.e.Cancel(c, target)
	case 4:
		err = h.e.SetQuota(c, target, "http", ptr(1000))
	default:
		err = h.e.SetDefaults(c, target, Defaults{})
	}
	if errors.Is(err, ErrSessionEnded) {
		return // the session lapsed
	}
	if !errors.Is(err, ErrNotFound) {
		h.t.Fatalf("step %d: a call outside the scope returned %v, want ErrNotFound", h.step, err)
	}
	if h.e.Seq() != before || h.queued() != queued {
		h.t.Fatalf("step %d: a refused call outside the scope changed the engine", h.step)
	}
}

// takeDue takes the decisions of time due now, as every call does first.
func (h *history) takeDue() {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	h.e.finishLocked(&Call{}, h.e.clockLocked())
}

func (h *history) queued() int {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	n := 0
	for _, s := range h.e.sessions {
		n += len(s.waiters)
	}
	return n
}

func (h *history) opValidate() {
	_, _ = h.e.Validate(&Call{Session: h.live()}, h.pick(h.leases))
}

// opRepeat repeats an earlier call with its request id: the engine answers
// from memory and applies nothing new for it.
func (h *history) opRepeat() {
	if len(h.requests) == 0 {
		return
	}
	u := h.requests[h.rng.IntN(len(h.requests))]
	before := h.e.Seq()
	_ = u.op(&Call{Session: u.session, Request: u.id})
	for _, ev := range h.rec.events[before:] {
		if ev.Session == u.session && ev.Request == u.id {
			h.checkFirstUse(ev, u)
		}
	}
}

// checkFirstUse fails if a repeated request id applied a change while the
// session still remembers that id.
func (h *history) checkFirstUse(ev *Event, u requestUse) {
	for _, old := range h.rec.events[:ev.Seq-1] {
		if old.Session == u.session && old.Request == u.id && h.remembered(u.session, u.id, old) {
			h.t.Fatalf("step %d: request %q of session %d applied twice (events %d and %d)", h.step, u.id, u.session, old.Seq, ev.Seq)
		}
	}
}

// remembered reports whether session s must still remember the id of old
// (SPEC §9): one of its most recent RequestMemory ids, or one of the last
// RequestWindow within RequestMemoryMax.
func (h *history) remembered(s ID, req string, old *Event) bool {
	n := 0
	last := old.Time
	for _, ev := range h.rec.events[old.Seq:] {
		if ev.Session == s && ev.Request != "" {
			n++
		}
		last = ev.Time
	}
	return n < RequestMemory || n < RequestMemoryMax && last-old.Time <= int64(RequestWindow)
}

func (h *history) opSettings() {
	s := Settings{TombstoneTTL: time.Duration(h.rng.IntN(5)) * time.Second, NodeRetention: time.Duration(h.rng.IntN(10)) * time.Second,
		MaxScheduleWait: time.Duration(h.rng.IntN(30)) * time.Second, KeyIdle: time.Duration(h.rng.IntN(6)) * time.Second}
	must(h.t, h.e.Configure(&Call{}, s))
}

// opKeyed consumes on a keyed limit under a node of the session's scope and
// lists the nodes it creates, so that every other operation reaches them
// too and Reap forgets them only when nothing on them tells them apart from
// new ones.
func (h *history) opKeyed() {
	s := h.live()
	k := KeyedLimit{
		Parent: h.nodeFor(s), Group: fmt.Sprint("g", h.rng.IntN(2)), Key: fmt.Sprint("k", h.rng.IntN(4)),
		Resource: []string{"http", "retry"}[h.rng.IntN(2)], Rate: h.keyRate(), Reset: h.rng.IntN(12) == 0,
	}
	amount := int64(h.rng.IntN(4))
	var o ConsumeOptions
	switch h.rng.IntN(4) {
	case 0:
		o.MaxWait = time.Duration(h.rng.IntN(20_000)) * time.Millisecond
	case 1:
		o.Drain = true
	}
	before := len(h.rec.events)
	_, _ = h.e.ConsumeKeyed(&Call{Session: s}, k, amount, o)
	for _, ev := range h.rec.events[before:] {
		if ev.Kind == KindNodeCreated {
			h.nodes = append(h.nodes, ev.Target)
		}
	}
}

// keyRate is half the time one of two rates, so that keys keep their
// buckets, and otherwise any rate.
func (h *history) keyRate() Rate {
	switch h.rng.IntN(4) {
	case 0:
		return Rate{Limit: 5, Period: time.Second}
	case 1:
		return Rate{Limit: 4, Period: 1500 * time.Millisecond, Burst: 2, Algorithm: LeakyBucket}
	}
	return h.randomRate()
}

func (h *history) opDescribe() {
	s := h.live()
	_, _, _, _ = h.e.Describe(&Call{Session: s}, h.nodeFor(s), &Page{})
}

// checkReplays rebuilds the engine three ways and compares each with the live
// one.
func (h *history) checkReplays() {
	live := h.e.Dump()
	h.image.Apply(h.e.Capture())
	if img := h.image.Snapshot(); !equalSnapshots(img, live) {
		h.t.Fatalf("the snapshot image differs from the engine:\n%s", diffSnapshots(img, live))
	}
	h.compare("events only", h.base, live)
	h.compare("mid-run snapshot and later events", h.mid, live)
	final, err := DecodeSnapshot(mustEncode(h.t, h.image.Snapshot()))
	must(h.t, err)
	h.later(h.compare("final snapshot", final, live))
}

// later lets time pass and checks that the rebuilt engine answers every
// peek and every charge as the live one does. Heartbeats are not recorded,
// so both first give every session one fresh TTL, as a restarted daemon
// does: sessions then end, and end the nodes they own, at the same instants.
func (h *history) later(e *Engine) {
	h.e.Revive()
	e.Revive()
	for step := range 30 {
		h.clock.Advance(time.Duration(h.rng.IntN(1500)) * time.Millisecond)
		n := h.nodes[h.rng.IntN(len(h.nodes))]
		res := []string{"http", "retry"}[h.rng.IntN(2)]
		amount := int64(h.rng.IntN(4))
		o := ConsumeOptions{}
		if amount > 0 && step%2 == 0 {
			o.MaxWait = 10 * time.Second
		}
		want, werr := h.e.ConsumeWith(&Call{}, n, res, amount, o)
		got, err := e.ConsumeWith(&Call{}, n, res, amount, o)
		if got != want || fmt.Sprint(err) != fmt.Sprint(werr) {
			h.t.Fatalf("later step %d, %d %s on node %d: rebuilt %+v %v, live %+v %v", step, amount, res, n, got, err, want, werr)
		}
	}
}

func mustEncode(t *testing.T, st *Snapshot) []byte {
	data, err := st.Encode()
	must(t, err)
	return data
}

func (h *history) compare(way string, from *Snapshot, live *Snapshot) *Engine {
	h.t.Helper()
	e, err := Restore(Options{Clock: h.clock}, from)
	if err != nil {
		h.t.Fatalf("%s: restore: %v", way, err)
	}
	if h.bounds.Default[BoundNodes] != 0 {
		must(h.t, e.SetBounds(h.bounds))
	}
	for _, ev := range h.rec.events {
		if ev.Seq <= from.Seq {
			continue
		}
		data, err := ev.Encode()
		must(h.t, err)
		dec, err := DecodeEvent(data)
		must(h.t, err)
		if err := e.Replay(dec); err != nil {
			h.t.Fatalf("%s: replay event %d (%s): %v", way, ev.Seq, ev.Kind, err)
		}
	}
	if err := checkState(e); err != nil {
		h.t.Fatalf("%s: replayed engine breaks an invariant: %v", way, err)
	}
	now := h.clock.Now().UnixNano()
	if got := e.Dump(); !equalSnapshots(visible(got, now), visible(live, now)) {
		h.t.Fatalf("%s: replay differs from the live engine:\n%s", way, diffSnapshots(visible(got, now), visible(live, now)))
	}
	return e
}
