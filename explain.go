package governor

import (
	"context"
	"errors"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Explanation says why a node cannot have more of a resource, or one more
// lease of a class, now, and when it could: what Client.Explain and
// DeniedError.Explain return. Caps on nodes above the key's scope are only
// told as Shared.
type Explanation struct {
	NodeID uint64
	Name   string // the resource or class explained
	Amount int64  // the amount of the resource the caps were checked for
	Now    time.Time
	// Caps are every cap on the node's chain that binds now, from the node
	// up. Empty: nothing binds.
	Caps []BindingCap
	// Waiting is where the node's queued acquires of the class stand; nil
	// when none is queued.
	Waiting *WaitPlace
	// Estimate is when it could go ahead.
	Estimate Estimate
}

// BindingCap is one cap that binds now.
type BindingCap struct {
	Kind     string // "quota", "rate" or "limit"
	Shared   bool   // on a node above the key's scope: nothing else is told
	NodeID   uint64
	NodeName string
	// Used and Limit: a quota's use and cap, a limit's leases held and
	// slots, a rate cap's units charged and limit.
	Used, Limit int64
	Refill      time.Time // when a rate cap admits the amount again; zero when it never can
	Never       bool      // a rate cap never admits the amount: it is more than it holds
	Holders     []Holder  // the leases holding a limit's slots, earliest to end first
	MoreHolders int64     // holders not listed
}

// Holder is a lease that holds a slot of a binding limit.
type Holder struct {
	LeaseID, NodeID uint64
	NodeName        string
	SessionID       uint64
	Granted         time.Time
	EndsBy          time.Time // the latest it can end; zero when nothing bounds it
	Basis           string    // why it ends by then: "max_hold", "deadline" or "session_expiry"
}

// WaitPlace is where a node's queued acquires of a class stand.
type WaitPlace struct {
	Waiters  int64  // queued on the node itself
	Place    int64  // the first one's place in its tenant's queue, 1 being next (while parked: behind the same full limit)
	Parked   bool   // parked behind a full limit inside its tenant
	ParkedAt uint64 // the node whose limit parks it, when in the key's scope
	TenantID uint64
	Weight   int64 // the tenant's weight in the fair rotation
	Rotation int64 // the tenant's place in the rotation, 1 being next; 0 when out of it
	Tenants  int64 // tenants in the rotation
}

// Estimate is when the thing explained could go ahead at the latest, if no
// other waiter takes the room first: Now when nothing binds, At when every
// binding cap is bounded in time, otherwise zero with Unknown saying why.
type Estimate struct {
	Now     bool
	At      time.Time
	Basis   []Bound
	Unknown string
}

// Bound is one bound an estimate rests on.
type Bound struct {
	Kind    string // "max_hold", "deadline", "session_expiry" or "rate_refill"
	NodeID  uint64
	LeaseID uint64
	At      time.Time
}

// Explain asks governord why node (0: the key's scope) cannot have amount
// more of resource name (0 means 1), or one more lease of class name, now.
// It changes nothing.
func (c *Client) Explain(ctx context.Context, node uint64, name string, amount int64) (*Explanation, error) {
	s, err := c.liveSession(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.api.Explain(ctx, connect.NewRequest(&governorv1.ExplainRequest{NodeId: node, Name: name, Amount: amount}))
	if err != nil {
		return nil, s.called(ctx, "explain", err)
	}
	return explanation(res.Msg), nil
}

// Explain asks governord why the refused call was refused, as it stands
// now: every cap that binds, not only the one the refusal named, and when
// it could go ahead. It works on the errors of Consume and Wait.
func (e *DeniedError) Explain(ctx context.Context) (*Explanation, error) {
	if e.explain == nil {
		return nil, errors.New("governor: this refusal carries no task to explain it on")
	}
	return e.explain(ctx)
}

// withExplain lets a refusal of a call made on task t explain itself.
func withExplain(t *Task, err error) error {
	var d *DeniedError
	if errors.As(err, &d) {
		d.explain = func(ctx context.Context) (*Explanation, error) {
			return t.c.Explain(ctx, t.id, d.Resource, d.Requested)
		}
	}
	return err
}

func explanation(m *governorv1.ExplainResponse) *Explanation {
	x := &Explanation{NodeID: m.NodeId, Name: m.Name, Amount: m.Amount, Now: when(m.Now)}
	for _, b := range m.Caps {
		x.Caps = append(x.Caps, bindingCap(b))
	}
	if w := m.Waiting; w != nil {
		x.Waiting = &WaitPlace{Waiters: w.Waiters, Place: w.Place, Parked: w.Parked, ParkedAt: w.ParkedAt,
			TenantID: w.TenantId, Weight: w.Weight, Rotation: w.Rotation, Tenants: w.Tenants}
	}
	if est := m.Estimate; est != nil {
		x.Estimate = Estimate{Now: est.Now, At: when(est.At), Unknown: est.Unknown}
		for _, b := range est.Basis {
			x.Estimate.Basis = append(x.Estimate.Basis, Bound{Kind: basisName(b.Kind), NodeID: b.NodeId, LeaseID: b.LeaseId, At: when(b.At)})
		}
	}
	return x
}

func bindingCap(b *governorv1.BindingCap) BindingCap {
	kind := strings.ToLower(strings.TrimPrefix(b.Kind.String(), "CAP_KIND_"))
	out := BindingCap{Kind: kind, Shared: b.Shared, NodeID: b.NodeId, NodeName: b.NodeName, Used: b.Used, Limit: b.Limit,
		Refill: when(b.Refill), Never: b.Never, MoreHolders: b.MoreHolders}
	for _, h := range b.Holders {
		out.Holders = append(out.Holders, Holder{LeaseID: h.LeaseId, NodeID: h.NodeId, NodeName: h.NodeName,
			SessionID: h.SessionId, Granted: when(h.Granted), EndsBy: when(h.EndsBy), Basis: basisName(h.Basis)})
	}
	return out
}

func basisName(b governorv1.EstimateBasis) string {
	if b == governorv1.EstimateBasis_ESTIMATE_BASIS_UNSPECIFIED {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(b.String(), "ESTIMATE_BASIS_"))
}

// when is a time from the wire; unset is the zero time.
func when(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}
