package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/cluster"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Messages of the cluster calls' refusals.
const (
	msgAdminOnly = "Cluster operations need the admin key; a tenant's key or a session token may not change or inspect the cluster."
	msgAlone     = "This governord is not a cluster member: it runs alone, with no cluster section in its file, so there is no membership to show or change."
)

// member authenticates a cluster call, which needs the admin key itself,
// and returns this governord's cluster member.
func (s *Server) member(req connect.AnyRequest) (*cluster.Node, error) {
	cred, err := bearer(req.Header())
	if err != nil {
		return nil, err
	}
	_, admin, ok := s.keys(cred)
	switch {
	case !ok && isToken(cred):
		return nil, connect.NewError(connect.CodePermissionDenied, errors.New(msgAdminOnly))
	case !ok:
		return nil, unauthenticated("The API key matches none that governord is configured with.")
	case !admin:
		return nil, connect.NewError(connect.CodePermissionDenied, errors.New(msgAdminOnly))
	}
	b, ok := s.store.(replicated)
	if !ok {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New(msgAlone))
	}
	return b.Node, nil
}

// membershipError is a refused membership change as the client sees it.
func membershipError(err error) error {
	switch {
	case errors.Is(err, cluster.ErrBadMember):
		return connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, cluster.ErrMembership):
		return connect.NewError(connect.CodeFailedPrecondition, err)
	}
	return toConnect(err)
}

// ClusterStatus describes the cluster as this member sees it; any member
// answers.
func (s *Server) ClusterStatus(_ context.Context, req *connect.Request[governorv1.ClusterStatusRequest]) (*connect.Response[governorv1.ClusterStatusResponse], error) {
	n, err := s.member(req)
	if err != nil {
		return nil, err
	}
	st, err := n.Status()
	if err != nil {
		return nil, toConnect(err)
	}
	res := &governorv1.ClusterStatusResponse{Id: string(st.ID), State: st.State.String(), Term: st.Term,
		LeaderId: string(st.Leader), CommitIndex: st.Commit}
	for _, m := range st.Members {
		res.Members = append(res.Members, &governorv1.ClusterMember{Id: string(m.ID), RaftAddress: string(m.Raft),
			ApiAddress: m.API, Suffrage: suffrage(m.Suffrage), Leader: m.Leader, Self: m.Self,
			LastIndex: m.LastIndex, AppliedIndex: m.Applied})
	}
	return connect.NewResponse(res), nil
}

func suffrage(s raft.ServerSuffrage) string {
	switch s {
	case raft.Voter:
		return "voter"
	case raft.Nonvoter:
		return "nonvoter"
	}
	return "staging"
}

// AddMember adds a voter, on the leader.
func (s *Server) AddMember(_ context.Context, req *connect.Request[governorv1.AddMemberRequest]) (*connect.Response[governorv1.AddMemberResponse], error) {
	n, err := s.member(req)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	index, err := n.AddVoter(raft.ServerID(m.GetId()), raft.ServerAddress(m.GetRaftAddress()), m.GetApiAddress())
	if err != nil {
		return nil, membershipError(err)
	}
	return connect.NewResponse(&governorv1.AddMemberResponse{ConfigurationIndex: index}), nil
}

// RemoveMember removes a member, on the leader.
func (s *Server) RemoveMember(_ context.Context, req *connect.Request[governorv1.RemoveMemberRequest]) (*connect.Response[governorv1.RemoveMemberResponse], error) {
	n, err := s.member(req)
	if err != nil {
		return nil, err
	}
	index, err := n.RemoveServer(raft.ServerID(req.Msg.GetId()))
	if err != nil {
		return nil, membershipError(err)
	}
	return connect.NewResponse(&governorv1.RemoveMemberResponse{ConfigurationIndex: index}), nil
}

// TransferLeadership hands the leadership to another voter, on the leader.
func (s *Server) TransferLeadership(_ context.Context, req *connect.Request[governorv1.TransferLeadershipRequest]) (*connect.Response[governorv1.TransferLeadershipResponse], error) {
	n, err := s.member(req)
	if err != nil {
		return nil, err
	}
	leader, err := n.TransferLeadership(raft.ServerID(req.Msg.GetId()))
	if err != nil {
		return nil, membershipError(err)
	}
	return connect.NewResponse(&governorv1.TransferLeadershipResponse{LeaderId: string(leader), LeaderApiAddress: n.APIOf(leader)}), nil
}
