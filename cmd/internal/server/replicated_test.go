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
	node  *cluster.Node
	srv   *Server
	addr  string // API host:port
	trans *raft.InmemTransport
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
	rc.HeartbeatTimeout, rc.ElectionTimeout = time.Second, time.Second
	rc.LeaderLeaseTimeout, rc.CommitTimeout = 500*time.Millisecond, 5*time.Millisecond
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
		ms = append(ms, &member{node: node, srv: srv, addr: lns[i].Addr().String(), trans: trans[i]})
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
func (m *member) token() (string, error) {
	res, err := m.client(adminKey).OpenSession(context.Background(), connect.NewRequest(&governorv1.OpenSessionRequest{}))
	if err != nil {
		return "", fmt.Errorf("open session: %w", err)
	}
	return res.Msg.Token, nil
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

// steady runs check on the leader until it passes, or fails in a term the
// leadership held throughout: a loaded machine may move the leadership
// mid-check, which is not what the checks are about. It returns what the
// passing check returned.
func steady[T any](t *testing.T, ms []*member, check func(lead *member) (T, error)) T {
	t.Helper()
	for attempt := 1; ; attempt++ {
		var lead *member
		eventually(t, "a leader", func() bool { lead = leaderOf(ms); return lead != nil })
		r := lead.node.Raft()
		term := r.CurrentTerm()
		v, err := check(lead)
		switch {
		case err == nil:
			return v
		case r.State() == raft.Leader && r.CurrentTerm() == term:
			t.Fatal(err)
		case attempt == 5:
			t.Fatalf("the leadership moved during five checks in a row; the last: %v", err)
		}
		t.Logf("the leadership moved during the check; again: %v", err)
	}
}

// A cluster member that is not the leader applies nothing: every call,
// writes and reads alike, is Unavailable and names the leader's API
// address in the Governor-Leader metadata; the charge made through the
// leader is on every replica, and the follower's refused charge on none.
func TestReplicatedFollowerNamesTheLeader(t *testing.T) {
	ms := newMembers(t)
	job := steady(t, ms, func(lead *member) (engine.ID, error) {
		ctx := context.Background()
		tok, err := lead.token()
		if err != nil {
			return 0, err
		}
		res, err := lead.client(tok).CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{
			Spec: &governorv1.NodeSpec{Name: "job", Quotas: map[string]int64{"tokens": 100}}, RequestId: "create"}))
		if err != nil {
			return 0, fmt.Errorf("create on the leader: %w", err)
		}
		job := res.Msg.Node.Id
		if _, err := lead.client(tok).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: 5, RequestId: "c1"})); err != nil {
			return 0, fmt.Errorf("consume on the leader: %w", err)
		}
		for _, m := range ms {
			if m == lead {
				continue
			}
			_, err := m.client(tok).Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: job, Resource: "tokens", Amount: 7, RequestId: "c2"}))
			if connect.CodeOf(err) != connect.CodeUnavailable || leaderHint(err) != lead.addr {
				return 0, fmt.Errorf("consume on a follower: got %v (leader header %q), want Unavailable naming %s", err, leaderHint(err), lead.addr)
			}
			_, err = m.client(tok).GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{NodeId: job}))
			if connect.CodeOf(err) != connect.CodeUnavailable || leaderHint(err) != lead.addr {
				return 0, fmt.Errorf("GetNode on a follower: got %v, want Unavailable naming %s", err, lead.addr)
			}
		}
		return engine.ID(job), nil
	})
	for i, m := range ms {
		eventually(t, "the charge on every replica", func() bool { return m.used(t, job, "tokens") >= 5 })
		if got := m.used(t, job, "tokens"); got != 5 {
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
	steady(t, ms, func(lead *member) (struct{}, error) {
		ctx := context.Background()
		tok, err := lead.token()
		if err != nil {
			return struct{}{}, err
		}
		cl := lead.client(tok)
		res, err := cl.CreateNode(ctx, connect.NewRequest(&governorv1.CreateNodeRequest{
			Spec: &governorv1.NodeSpec{Name: "job", Quotas: map[string]int64{"tokens": 1000}}, RequestId: "create"}))
		if err != nil {
			return struct{}{}, err
		}
		id := engine.ID(res.Msg.Node.Id)
		for i := range 200 {
			if _, err := cl.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{NodeId: uint64(id), Resource: "tokens", Amount: 1, RequestId: fmt.Sprint("c", i)})); err != nil {
				return struct{}{}, err
			}
			if got := lead.used(t, id, "tokens"); got != int64(i+1) {
				t.Fatalf("after %d acknowledged consumes the leader's replica has used %d", i+1, got)
			}
		}
		return struct{}{}, nil
	})
}

// isolate cuts m off from the other members, both ways, or joins it again.
func isolate(ms []*member, m *member, cut bool) {
	for _, o := range ms {
		if o == m {
			continue
		}
		if cut {
			m.trans.Disconnect(o.trans.LocalAddr())
			o.trans.Disconnect(m.trans.LocalAddr())
		} else {
			m.trans.Connect(o.trans.LocalAddr(), o.trans)
			o.trans.Connect(m.trans.LocalAddr(), m.trans)
		}
	}
}

// A leader cut off from the others can neither confirm its leadership nor
// commit, so it acknowledges nothing: the consume is Unavailable. Retried
// with the same request id once the cluster has a leader again, it is
// charged once.
func TestReplicatedNoAnswerWithoutQuorum(t *testing.T) {
	ms := newMembers(t)
	type job struct {
		lead *member
		tok  string
		id   uint64
	}
	j := steady(t, ms, func(lead *member) (job, error) {
		tok, err := lead.token()
		if err != nil {
			return job{}, err
		}
		res, err := lead.client(tok).CreateNode(context.Background(), connect.NewRequest(&governorv1.CreateNodeRequest{
			Spec: &governorv1.NodeSpec{Name: "job", Quotas: map[string]int64{"tokens": 100}, Detached: true}, RequestId: "create"}))
		if err != nil {
			return job{}, err
		}
		return job{lead, tok, res.Msg.Node.Id}, nil
	})
	isolate(ms, j.lead, true)
	consume := &governorv1.ConsumeRequest{NodeId: j.id, Resource: "tokens", Amount: 1, RequestId: "once"}
	_, err := j.lead.client(j.tok).Consume(context.Background(), connect.NewRequest(consume))
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("a consume on a leader cut off from the others: got %v, want Unavailable", err)
	}
	isolate(ms, j.lead, false)
	var lead *member
	eventually(t, "a leader again", func() bool {
		if lead = leaderOf(ms); lead == nil {
			return false
		}
		_, err := lead.client(j.tok).Consume(context.Background(), connect.NewRequest(consume))
		return err == nil
	})
	eventually(t, "the retry on every replica", func() bool { return lead.used(t, engine.ID(j.id), "tokens") >= 1 })
	if got := lead.used(t, engine.ID(j.id), "tokens"); got != 1 {
		t.Errorf("one consume sent twice with one request id was charged %d times", got)
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
