package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/cluster"
	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// member is one server of a cluster test: a cluster member in this process
// over raft's in-memory transport, served on a loopback port.
type member struct {
	node *cluster.Node
	srv  *Server
	addr string // API host:port
}

// newMembers starts three members that bootstrap one cluster, each serving
// the API over its own replica, and waits for a leader.
func newMembers(t *testing.T) []*member {
	t.Helper()
	const n = 3
	api := map[raft.ServerID]string{}
	var trans []*raft.InmemTransport
	var servers []raft.Server
	var lns []net.Listener
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		id := raft.ServerID(fmt.Sprintf("m%d", i))
		api[id] = ln.Addr().String()
		_, tr := raft.NewInmemTransport("")
		trans = append(trans, tr)
		servers = append(servers, raft.Server{ID: id, Address: tr.LocalAddr()})
	}
	for _, a := range trans {
		for _, b := range trans {
			if a != b {
				a.Connect(b.LocalAddr(), b)
			}
		}
	}
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = 500*time.Millisecond, 500*time.Millisecond
	rc.LeaderLeaseTimeout, rc.CommitTimeout = 250*time.Millisecond, 5*time.Millisecond
	keys := (&config.Config{AdminKey: adminKey}).MatchKey
	var ms []*member
	for i := range n {
		node, err := cluster.Open(cluster.Config{ID: servers[i].ID, Transport: trans[i], API: api, Raft: rc, Bootstrap: servers, ReapEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := New(Options{Backend: Replicated(node), Keys: keys, Logger: slog.New(&logSink{})})
		if err != nil {
			t.Fatal(err)
		}
		hs := &http.Server{Handler: srv.Handler(), Protocols: new(http.Protocols)}
		hs.Protocols.SetUnencryptedHTTP2(true)
		go func() { _ = hs.Serve(lns[i]) }()
		t.Cleanup(func() {
			srv.Close()
			_ = hs.Close()
			_ = node.Shutdown()
		})
		ms = append(ms, &member{node: node, srv: srv, addr: lns[i].Addr().String()})
	}
	eventually(t, "a leader", func() bool { return leaderOf(ms) != nil })
	return ms
}

// leaderOf is the member that leads now, or nil.
func leaderOf(ms []*member) *member {
	for _, m := range ms {
		if m.node.Raft().State() == raft.Leader {
			return m
		}
	}
	return nil
}

// client calls m's API with cred.
func (m *member) client(cred string) governorv1connect.GovernorServiceClient {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return governorv1connect.NewGovernorServiceClient(&http.Client{Transport: tr}, "http://"+m.addr,
		connect.WithInterceptors(bearerAuth(cred)))
}

// token opens an admin session through m.
func (m *member) token(t *testing.T) string {
	t.Helper()
	res, err := m.client(adminKey).OpenSession(context.Background(), connect.NewRequest(&governorv1.OpenSessionRequest{ClientName: t.Name()}))
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	return res.Msg.Token
}

// used is what node id has used of resource on m's own replica.
func (m *member) used(t *testing.T, id engine.ID, resource string) int64 {
	t.Helper()
	inf, _, _, err := m.node.FSM().Engine().Describe(&engine.Call{}, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return inf.Quotas[resource].Used
}

// A cluster member that is not the leader applies nothing: every call,
// writes and reads alike, is Unavailable and names the leader's API
// address in the Governor-Leader metadata; the charge made through the
// leader is on every replica, and the follower's refused charge on none.
func TestReplicatedFollowerNamesTheLeader(t *testing.T) {
	ms := newMembers(t)
	ctx := context.Background()
	lead := leaderOf(ms)
	tok := lead.token(t)
	res, err := lead.client(tok).CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{
		Spec: &governorv1.NodeSpec{Name: "job", Quotas: map[string]int64{"tokens": 100}}, RequestId: "create"}))
	if err != nil {
		t.Fatalf("create on the leader: %v", err)
	}
	job := res.Msg.Node.Id
	if _, err := lead.client(tok).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: 5, RequestId: "c1"})); err != nil {
		t.Fatalf("consume on the leader: %v", err)
	}
	for _, m := range ms {
		if m == lead {
			continue
		}
		_, err := m.client(tok).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: 7, RequestId: "c2"}))
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeUnavailable || ce.Meta().Get("Governor-Leader") != lead.addr {
			t.Fatalf("consume on a follower: got %v (leader header %q), want Unavailable naming %s", err, leaderHint(err), lead.addr)
		}
		_, err = m.client(tok).GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: job}))
		if connect.CodeOf(err) != connect.CodeUnavailable || leaderHint(err) != lead.addr {
			t.Fatalf("GetNode on a follower: got %v, want Unavailable naming %s", err, lead.addr)
		}
	}
	for i, m := range ms {
		id := engine.ID(job)
		eventually(t, "the charge on every replica", func() bool { return m.used(t, id, "tokens") >= 5 })
		if got := m.used(t, id, "tokens"); got != 5 {
			t.Errorf("replica %d has used %d tokens, want the leader's 5 only", i, got)
		}
	}
}

func leaderHint(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Meta().Get("Governor-Leader")
	}
	return ""
}

// An answer from the leader is given only once the command is applied,
// which for raft means committed: the leader's own replica holds every
// charge it acknowledged the moment the answer arrives.
func TestReplicatedAnswerFollowsApply(t *testing.T) {
	ms := newMembers(t)
	ctx := context.Background()
	lead := leaderOf(ms)
	cl := lead.client(lead.token(t))
	res, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{
		Spec: &governorv1.NodeSpec{Name: "job", Quotas: map[string]int64{"tokens": 1000}}, RequestId: "create"}))
	if err != nil {
		t.Fatal(err)
	}
	id := engine.ID(res.Msg.Node.Id)
	for i := range 20 {
		if _, err := cl.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(id), Resource: "tokens", Amount: 1, RequestId: fmt.Sprint("c", i)})); err != nil {
			t.Fatal(err)
		}
		if got := lead.used(t, id, "tokens"); got != int64(i+1) {
			t.Fatalf("after %d acknowledged consumes the leader's replica has used %d", i+1, got)
		}
	}
}

// A cluster's refusals reach the client as Unavailable: a follower's with
// the leader's address, an unknown outcome saying that a retry with the
// same request id is safe.
func TestReplicatedErrors(t *testing.T) {
	err := toConnect(&cluster.ErrNotLeader{Leader: "10.0.0.2:7070"})
	if connect.CodeOf(err) != connect.CodeUnavailable || leaderHint(err) != "10.0.0.2:7070" {
		t.Errorf("not leader: got %v with hint %q", err, leaderHint(err))
	}
	err = toConnect(&cluster.ErrNotLeader{})
	if connect.CodeOf(err) != connect.CodeUnavailable || leaderHint(err) != "" {
		t.Errorf("no leader known: got %v with hint %q", err, leaderHint(err))
	}
	err = toConnect(fmt.Errorf("%w: %w", cluster.ErrUnknownOutcome, raft.ErrLeadershipLost))
	if connect.CodeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), "same request id is safe") {
		t.Errorf("unknown outcome: got %v", err)
	}
}
