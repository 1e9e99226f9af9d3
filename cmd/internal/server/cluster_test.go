package server

import (
	"context"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// TestClusterCallsNeedTheAdminKeyAndACluster: a tenant's key and a session
// token are PermissionDenied, a governord that runs alone answers the
// admin FailedPrecondition.
func TestClusterCallsNeedTheAdminKeyAndACluster(t *testing.T) {
	e := newEnv(t, sqliteURL(t))
	_, sess := e.session(adminKey)
	ctx := context.Background()
	for cred, want := range map[string]connect.Code{
		keyA:        connect.CodePermissionDenied,
		sess.Token:  connect.CodePermissionDenied,
		"not-a-key": connect.CodeUnauthenticated,
		adminKey:    connect.CodeFailedPrecondition,
	} {
		c := e.client(cred)
		_, statusErr := c.ClusterStatus(ctx, connect.NewRequest(&governorv1.ClusterStatusRequest{}))
		_, addErr := c.AddMember(ctx, connect.NewRequest(&governorv1.AddMemberRequest{Id: "x", RaftAddress: "10.0.0.9:7610", ApiAddress: "10.0.0.9:7600"}))
		_, removeErr := c.RemoveMember(ctx, connect.NewRequest(&governorv1.RemoveMemberRequest{Id: "x"}))
		_, transferErr := c.TransferLeadership(ctx, connect.NewRequest(&governorv1.TransferLeadershipRequest{}))
		for name, err := range map[string]error{"status": statusErr, "add": addErr, "remove": removeErr, "transfer": transferErr} {
			if connect.CodeOf(err) != want {
				t.Errorf("%s with credential %q answered %v, want %v", name, cred, err, want)
			}
		}
	}
}

// TestClusterCallsOnMembers: every member answers the status with the
// members' API addresses; a change asked of a follower is refused with the
// leader's API address; the leader refuses bad changes with the codes of
// their kind and makes good ones.
func TestClusterCallsOnMembers(t *testing.T) {
	ms := newMembers(t)
	ctx := context.Background()
	lead := leaderOf(ms)
	var follower *member
	for _, m := range ms {
		if m != lead {
			follower = m
		}
	}
	eventually(t, "the follower to know the leader", func() bool { _, id := follower.node.Raft().LeaderWithID(); return id != "" })
	st, err := follower.client(adminKey).ClusterStatus(ctx, connect.NewRequest(&governorv1.ClusterStatusRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Msg.Members) != 3 || st.Msg.State != "Follower" {
		t.Fatalf("a follower's status is %v", st.Msg)
	}
	for _, m := range st.Msg.Members {
		want := ""
		for _, x := range ms {
			if m.Id == memberID(x) {
				want = x.addr
			}
		}
		if m.ApiAddress != want || m.Leader != (m.Id == memberID(lead)) || m.Suffrage != "voter" {
			t.Errorf("member row %v, want API address %s", m, want)
		}
	}
	_, err = follower.client(adminKey).RemoveMember(ctx, connect.NewRequest(&governorv1.RemoveMemberRequest{Id: memberID(follower)}))
	checkNotLeader(t, "remove on a follower", lead.addr, err)

	c := lead.client(adminKey)
	_, err = c.AddMember(ctx, connect.NewRequest(&governorv1.AddMemberRequest{Id: "x", RaftAddress: "nowhere", ApiAddress: "10.0.0.9:7600"}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("an add with a bad address answered %v, want InvalidArgument", err)
	}
	_, err = c.RemoveMember(ctx, connect.NewRequest(&governorv1.RemoveMemberRequest{Id: memberID(lead)}))
	if connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("the leader removing itself answered %v, want FailedPrecondition", err)
	}
	res, err := c.TransferLeadership(ctx, connect.NewRequest(&governorv1.TransferLeadershipRequest{Id: memberID(follower)}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.LeaderId != "" && (res.Msg.LeaderId != memberID(follower) || res.Msg.LeaderApiAddress != follower.addr) {
		t.Fatalf("the transfer to %s answered %v", memberID(follower), res.Msg)
	}
	eventually(t, "the new leader", func() bool { return leaderOf(ms) == follower })
}

func memberID(m *member) string {
	st, _ := m.node.Status()
	return string(st.ID)
}
