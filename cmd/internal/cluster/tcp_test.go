package cluster

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// TestClusterOverLoopbackTCP runs three members over raft's TCP transport
// on 127.0.0.1 ports the system chose, on disk: a write on the leader is
// applied on every member.
func TestClusterOverLoopbackTCP(t *testing.T) {
	var trans []*raft.NetworkTransport
	var servers []raft.Server
	for i := range 3 {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 10*time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		trans = append(trans, tr)
		servers = append(servers, raft.Server{ID: serverID(i), Address: tr.LocalAddr()})
	}
	tc := &testCluster{t: t}
	for i, tr := range trans {
		n, err := Open(Config{ID: serverID(i), Transport: tr, Dir: t.TempDir(), Raft: testRaftConfig(), Bootstrap: servers,
			ReapEvery: time.Hour, API: map[raft.ServerID]string{serverID(i): fmt.Sprint(tr.LocalAddr())}})
		if err != nil {
			t.Fatal(err)
		}
		tc.nodes = append(tc.nodes, n)
	}
	t.Cleanup(tc.shutdown)
	l := tc.leader()
	s, nd := tenant(t, l)
	if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 7); err != nil {
		t.Fatal(err)
	}
	if !tc.converged() {
		t.Fatal("members over TCP differ after the same log")
	}
	for _, n := range tc.nodes {
		info, _, _, err := n.fsm.Engine().Describe(&engine.Call{}, nd.ID, nil)
		if err != nil || info.Quotas["tokens"].Used != 7 {
			t.Fatalf("member %s: %v, used %d, want 7", n.cfg.ID, err, info.Quotas["tokens"].Used)
		}
	}
}
