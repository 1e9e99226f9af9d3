package server

import (
	"context"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Explain says why a node in the caller's scope cannot have more of a
// resource or one more lease of a class now, and when it could. It takes a
// session token or an API key; caps above the caller's scope are told only
// as shared.
func (s *Server) Explain(ctx context.Context, req *connect.Request[governorv1.ExplainRequest]) (*connect.Response[governorv1.ExplainResponse], error) {
	p, err := s.sessionOrKey(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := checkNode("node_id", m.NodeId); err != nil {
		return nil, err
	}
	if err := checkKey("name", m.Name); err != nil {
		return nil, err
	}
	if m.Amount < 0 {
		return nil, badField("amount", "must be 0 (meaning 1) or more")
	}
	if err := s.room(ctx); err != nil {
		return nil, err
	}
	c := &engine.Call{Session: p.session}
	x, err := s.store.Explain(c, engine.ID(m.NodeId), m.Name, m.Amount)
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return nil, err
	}
	return connect.NewResponse(wireExplanation(x)), nil
}

func wireExplanation(x engine.Explanation) *governorv1.ExplainResponse {
	out := &governorv1.ExplainResponse{
		NodeId: uint64(x.Node), Name: x.Name, Amount: x.Amount, Now: stamp(x.Now),
		Estimate: &governorv1.RunEstimate{Now: x.Estimate.Now, At: stamp(x.Estimate.At), Unknown: x.Estimate.Unknown},
	}
	for _, b := range x.Caps {
		out.Caps = append(out.Caps, wireBinding(b))
	}
	for _, b := range x.Estimate.Basis {
		out.Estimate.Basis = append(out.Estimate.Basis, &governorv1.EstimateBound{
			Kind: governorv1.EstimateBasis(b.Kind), NodeId: uint64(b.Node), LeaseId: uint64(b.Lease), At: stamp(b.At),
		})
	}
	if w := x.Waiting; w != nil {
		out.Waiting = &governorv1.WaitPlace{
			Waiters: int64(w.Waiters), Place: int64(w.Place), Parked: w.Parked, ParkedAt: uint64(w.ParkedAt),
			TenantId: uint64(w.Tenant), Weight: int64(w.Weight), Rotation: int64(w.Rotation), Tenants: int64(w.Tenants),
		}
	}
	return out
}

func wireBinding(b engine.Binding) *governorv1.BindingCap {
	out := &governorv1.BindingCap{
		Kind: governorv1.CapKind(b.Kind), Shared: b.Shared, NodeId: uint64(b.Node), NodeName: b.NodeName,
		Used: b.Used, Limit: b.Limit, Refill: stamp(b.Refill), Never: b.Never, MoreHolders: int64(b.MoreHolders),
	}
	for _, h := range b.Holders {
		out.Holders = append(out.Holders, &governorv1.SlotHolder{
			LeaseId: uint64(h.Lease), NodeId: uint64(h.Node), NodeName: h.NodeName, SessionId: uint64(h.Session),
			Granted: stamp(h.Granted), EndsBy: stamp(h.EndsBy), Basis: governorv1.EstimateBasis(h.Basis),
		})
	}
	return out
}
