package server

import (
	"context"
	"fmt"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// OpenSession exchanges an API key for a session token confined to the
// key's scope: its tenant's node, or the root for the admin key.
func (s *Server) OpenSession(ctx context.Context, req *connect.Request[governorv1.OpenSessionRequest]) (*connect.Response[governorv1.OpenSessionResponse], error) {
	scope, tenant, err := s.apiKey(req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	ttl, err := checkDuration("ttl", m.Ttl, s.ttl.Min, s.ttl.Max,
		fmt.Sprintf("must be between %s and %s, or unset for %s", s.ttl.Min, s.ttl.Max, s.ttl.Default))
	if err != nil {
		return nil, err
	}
	if m.Ttl == nil {
		ttl = s.ttl.Default
	}
	if len(m.ClientName) > maxClientLen {
		return nil, badField("client_name", fmt.Sprintf("must be at most %d bytes", maxClientLen))
	}
	if err := s.room(ctx); err != nil {
		return nil, err
	}
	token, hash := newToken()
	c := &engine.Call{}
	info, err := s.store.OpenSession(c, scope, ttl, hash)
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return nil, err
	}
	s.log.Debug("session opened", "session", info.ID, "scope", scope, "tenant", tenant, "client", m.ClientName, "ttl", ttl)
	return connect.NewResponse(&governorv1.OpenSessionResponse{
		SessionId: uint64(info.ID), Token: token, ScopeNodeId: uint64(info.Scope),
		Tenant: tenant, Ttl: durationpb.New(info.TTL),
	}), nil
}

// Heartbeat renews the caller's session for one more TTL.
func (s *Server) Heartbeat(ctx context.Context, req *connect.Request[governorv1.HeartbeatRequest]) (*connect.Response[governorv1.HeartbeatResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	if err := s.room(ctx); err != nil {
		return nil, err
	}
	c := &engine.Call{Session: p.session}
	info, err := s.store.Heartbeat(c)
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return nil, err
	}
	return connect.NewResponse(&governorv1.HeartbeatResponse{
		Ttl: durationpb.New(info.TTL), ExpiresAt: stamp(info.Expires),
	}), nil
}

// CloseSession ends the caller's session: its leases are released and its
// waiting acquires fail.
func (s *Server) CloseSession(ctx context.Context, req *connect.Request[governorv1.CloseSessionRequest]) (*connect.Response[governorv1.CloseSessionResponse], error) {
	p, err := s.session(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	if err := s.room(ctx); err != nil {
		return nil, err
	}
	c := &engine.Call{Session: p.session}
	err = s.store.CloseSession(c)
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return nil, err
	}
	return connect.NewResponse(&governorv1.CloseSessionResponse{}), nil
}
