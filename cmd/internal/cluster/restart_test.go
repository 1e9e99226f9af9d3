package cluster

import (
	"testing"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// TestMemberRestartsFromItsDataDir runs a one-member cluster on disk
// (raft-wal log, file snapshots), snapshots halfway, and restarts it from
// its directory: it must come back with every acknowledged write. A member
// that did not close its log at Shutdown makes the restart wait forever.
func TestMemberRestartsFromItsDataDir(t *testing.T) {
	dir := t.TempDir()
	cfg := soloOnDisk(dir)
	n := openSolo(t, cfg)
	tc := &testCluster{t: t, nodes: []*Node{n}}
	l := tc.leader()
	s, nd := tenant(t, l)
	for i := range 40 {
		if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1); err != nil {
			t.Fatal(err)
		}
		if i == 20 {
			if err := l.raft.Snapshot().Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := l.fsm.Checksum()
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	n = openSolo(t, cfg)
	t.Cleanup(func() { _ = n.Shutdown() })
	tc.nodes = []*Node{n}
	l = tc.leader()
	if got := used(t, l, nd.ID); got != 40 {
		t.Fatalf("after a restart the member reads %d tokens used, want 40", got)
	}
	if l.fsm.Checksum() != want {
		t.Fatal("the restarted member's state differs from before the restart")
	}
}

func TestOpenRefusesAnIncompleteConfig(t *testing.T) {
	_, tr := raft.NewInmemTransport("")
	for name, cfg := range map[string]Config{
		"no id":        {Transport: tr},
		"no transport": {ID: "a"},
	} {
		if n, err := Open(cfg); err == nil {
			_ = n.Shutdown()
			t.Errorf("%s: Open accepted the config", name)
		}
	}
}
