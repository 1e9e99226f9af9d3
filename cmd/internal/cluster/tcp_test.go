package cluster

import (
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// TestClusterOverLoopbackTCP runs three members over raft's TCP transport
// on 127.0.0.1 ports the system chose, on disk: a write on the leader is
// applied on every member.
func TestClusterOverLoopbackTCP(t *testing.T) {
	tc := newTCPCluster(t, 3, testRaftConfig())
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
