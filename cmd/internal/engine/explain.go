package engine

import (
	"cmp"
	"sort"
)

// CapKind says what kind of cap binds.
type CapKind uint8

// The kinds of cap an explanation lists.
const (
	CapQuota CapKind = iota + 1 // a quota: used against its cap
	CapRate                     // a rate cap: what it admits before it refills
	CapLimit                    // a concurrency limit: leases held against its slots
)

var capKindNames = [...]string{"", "quota", "rate", "limit"}

func (k CapKind) String() string {
	if int(k) < len(capKindNames) && k > 0 {
		return capKindNames[k]
	}
	return "unknown"
}

// Explanation says why a node cannot have one more unit of a resource (or
// Amount of it) or one more lease of a class now, and when it could.
type Explanation struct {
	Node   ID
	Name   string // the resource or class explained
	Amount int64  // the amount of the resource the caps were checked for
	Now    int64  // the engine's time the explanation holds at, unix nanoseconds
	// Caps are every cap on the node's chain that binds now, from the node
	// up to the root: quotas and rate caps of the resource Name and
	// concurrency limits of the class Name. Empty: nothing binds.
	Caps []Binding
	// Waiting describes the acquires of class Name queued on the node
	// itself; nil when none is.
	Waiting *WaitInfo
	// Estimate is when the acquire or the consume could go ahead.
	Estimate Estimate
}

// Binding is one cap that binds now. A cap on a node above the caller's
// scope is Shared: only its kind and that it binds are told.
type Binding struct {
	Kind     CapKind
	Shared   bool
	Node     ID
	NodeName string
	// Used and Limit: a quota's use and cap, a limit's leases held and
	// slots, a rate cap's units charged in the current refill and its limit.
	Used  int64
	Limit int64
	// Refill is when a rate cap admits Amount again, unix nanoseconds; 0
	// when it never can (Never) and for quotas and limits.
	Refill int64
	// Never says a rate cap can never admit Amount: it is more than the cap
	// ever holds.
	Never bool
	// Holders are leases that hold a limit's slots, earliest to end first,
	// at most MaxHolders of them; MoreHolders counts those left out.
	Holders     []Holder
	MoreHolders int

	bound Basis  // a limit's bound on when the slot needed frees
	why   string // or why there is none
}

// Holder is a lease that holds one slot of a binding limit.
type Holder struct {
	Lease    ID
	Node     ID
	NodeName string
	Session  ID
	Granted  int64 // unix nanoseconds
	// EndsBy is the earliest instant at which the lease must end: its
	// max hold, its node's deadline or its session's expiry; 0 when none
	// bounds it. Basis says which.
	EndsBy int64
	Basis  BasisKind
}

// WaitInfo is the place of a node's queued acquires of one class.
type WaitInfo struct {
	Waiters int // acquires of the class queued on the node itself
	// Place is the place of the node's first waiter in its tenant's queue
	// of the class, 1 being the next to be served: among the acquires that
	// may fit, or, while Parked, among those parked behind the same full
	// limit.
	Place int
	// ParkedAt is the node inside the tenant whose full limit blocks the
	// waiters, when it is in the caller's scope; 0 otherwise.
	ParkedAt ID
	Parked   bool
	Tenant   ID // the tenant whose queue it waits in
	Weight   int
	// Rotation is the tenant's place in its class's fair rotation, 1
	// being the tenant served next; 0 when the tenant is out of the
	// rotation (its own limit is full, or nothing of it may fit). Tenants
	// is how many tenants are in the rotation.
	Rotation int
	Tenants  int
}

// BasisKind is what an estimate rests on.
type BasisKind uint8

// What an estimate may rest on.
const (
	BasisNone          BasisKind = iota
	BasisMaxHold                 // a holder's max hold runs out
	BasisDeadline                // a holder's node reaches its deadline
	BasisSessionExpiry           // a holder's session expires unless renewed
	BasisRateRefill              // a rate cap refills
)

var basisNames = [...]string{"none", "max_hold", "deadline", "session_expiry", "rate_refill"}

func (b BasisKind) String() string {
	if int(b) < len(basisNames) {
		return basisNames[b]
	}
	return "unknown"
}

// Estimate is when the thing explained could run at the latest, if no other
// waiter takes the slots or units first. It is Now when nothing binds, At
// when every binding cap is bounded in time, and unknown (At 0, Unknown
// says why) otherwise.
type Estimate struct {
	Now     bool
	At      int64 // unix nanoseconds
	Basis   []Basis
	Unknown string
}

// Basis is one bound an estimate rests on: the instant a cap frees the room
// needed, and why it must by then.
type Basis struct {
	Kind  BasisKind
	Node  ID // the node that holds the cap; 0 for a shared cap
	Lease ID // the holder whose end frees the slot, for a limit
	At    int64
}

// Bounds on the work an explanation does under the engine lock.
const (
	// MaxHolders is how many holders a binding limit lists.
	MaxHolders = 32
	// maxExplainNodes is how many nodes of a binding limit's subtree are
	// searched for its holders, and how many leases are looked at: enough
	// to list MaxHolders and bound an estimate, few enough to keep the
	// engine lock for well under a millisecond (BenchmarkExplain).
	maxExplainNodes = 256
	// maxExplainScan bounds the groups and tenants counted for a place in
	// a queue or a rotation.
	maxExplainScan = 4096
)

// Explain says why node id cannot have amount more of resource name, or one
// more lease of class name, now: every cap on its chain that binds, where
// the node's queued acquires of the class stand, and when it could go ahead.
// A name may be both a resource and a class; both are explained. amount is
// 1 when 0. It changes nothing and records nothing; its work is bounded.
func (e *Engine) Explain(c *Call, id ID, name string, amount int64) (Explanation, error) {
	if err := validKey("name", name); err != nil {
		return Explanation{}, err
	}
	if amount < 0 {
		return Explanation{}, invalid("amount", "must be 0 (meaning 1) or more, got %d", amount)
	}
	amount = max(amount, 1)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clockLocked()
	defer e.finishLocked(c, now)
	s, n, err := e.callerLocked(c, id)
	if err != nil {
		return Explanation{}, err
	}
	if err := n.activeErr(); err != nil {
		return Explanation{}, err
	}
	x := Explanation{Node: n.id, Name: name, Amount: amount, Now: now}
	scope := cmp.Or(scopeOf(s), e.root)
	x.Caps = e.resourceBindings(n, scope, name, amount, now)
	x.Waiting = e.waitInfo(n, scope, name)
	place := 1
	if x.Waiting != nil && x.Waiting.Place > 0 {
		place = x.Waiting.Place
	}
	x.Caps = append(x.Caps, e.limitBindings(n, scope, name, place)...)
	x.Estimate = estimate(x.Caps, now)
	return x, nil
}

// resourceBindings lists the quotas and rate caps of r on n's chain that
// would refuse amount now.
func (e *Engine) resourceBindings(n, scope *node, r string, amount, now int64) []Binding {
	var out []Binding
	for a := n; a != nil; a = a.parent {
		rs := a.findRes(r)
		if rs == nil {
			continue
		}
		if rs.capped && amount > rs.cap-rs.used {
			out = append(out, reveal(a, scope, Binding{Kind: CapQuota, Used: rs.used, Limit: rs.cap}))
		}
		if b := rs.rate; b != nil {
			wait, never, _, left, _ := b.check(now, amount)
			if wait > 0 || never {
				bd := Binding{Kind: CapRate, Used: max(b.Limit-left, 0), Limit: b.Limit, Never: never}
				if !never {
					bd.Refill = now + wait
				}
				out = append(out, reveal(a, scope, bd))
			}
		}
	}
	return out
}

// reveal names the node of a binding in the caller's scope, and hides
// everything but its kind when the node is above it.
func reveal(a, scope *node, b Binding) Binding {
	if !a.within(scope) {
		return Binding{Kind: b.Kind, Shared: true}
	}
	b.Node, b.NodeName = a.id, a.name
	return b
}

// estimate is when every binding cap has freed what is needed: the latest
// of their bounds, or unknown when one of them has none.
func estimate(caps []Binding, now int64) Estimate {
	if len(caps) == 0 {
		return Estimate{Now: true, At: now}
	}
	var est Estimate
	for i := range caps {
		b, why := capBound(&caps[i])
		if why != "" {
			return Estimate{Unknown: why}
		}
		est.Basis = append(est.Basis, b)
		est.At = max(est.At, b.At)
	}
	sort.Slice(est.Basis, func(i, j int) bool { return est.Basis[i].At < est.Basis[j].At })
	return est
}

// capBound is when one binding cap frees the room needed, or why nothing
// says.
func capBound(b *Binding) (Basis, string) {
	switch {
	case b.Shared:
		return Basis{}, "a shared cap above the caller's scope binds"
	case b.Kind == CapQuota:
		return Basis{}, "a quota binds, and a quota never refills: raise it or free the work elsewhere"
	case b.Kind == CapRate && b.Never:
		return Basis{}, "the amount is more than a rate cap ever admits at once"
	case b.Kind == CapRate:
		return Basis{Kind: BasisRateRefill, Node: b.Node, At: b.Refill}, ""
	}
	return b.bound, b.why // a limit: what limitBindings found
}
