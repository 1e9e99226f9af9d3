package cluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

func writeRecovery(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, RecoveryFile), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryAfterQuorumLoss loses two of three members on disk for good,
// restarts the survivor with a recovery file that lists it alone, and adds
// two new members: the survivor must lead with every acknowledged write,
// the new members must reach the same state, and the file must not be
// read again.
func TestRecoveryAfterQuorumLoss(t *testing.T) {
	base := t.TempDir()
	tc := newCluster(t, 3, func(c *Config) { c.Dir = filepath.Join(base, string(c.ID)) })
	l, li := tc.leaderIndex()
	s, nd := tenant(t, l)
	for range 30 {
		if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1); err != nil {
			t.Fatal(err)
		}
	}
	if !tc.converged() {
		t.Fatal("the members differ before the loss")
	}
	survivor := (li + 1) % 3
	tc.kill(li)
	tc.kill((li + 2) % 3)
	tc.kill(survivor)
	dir := filepath.Join(base, string(serverID(survivor)))
	writeRecovery(t, dir, `{"members": [{"id": "`+string(serverID(survivor))+`", "raft": "`+string(tc.trans[survivor].LocalAddr())+`"}]}`)
	tc.connect()
	tc.start(survivor, nil)
	l = tc.leader()
	if got := used(t, l, nd.ID); got != 30 {
		t.Fatalf("the recovered member reads %d tokens used, want the 30 acknowledged", got)
	}
	if _, err := os.Stat(filepath.Join(dir, RecoveryFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the recovery file is still in place after the recovery: %v", err)
	}
	for _, api := range []string{"127.0.0.1:7901", "127.0.0.1:7902"} {
		n, addr := tc.joinAlone(api)
		if _, err := l.AddVoter(n.cfg.ID, addr, api); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1); err != nil {
		t.Fatal(err)
	}
	if !tc.converged() {
		t.Fatal("the new members differ from the recovered one")
	}
	st, err := l.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Members) != 3 {
		t.Fatalf("the recovered cluster has %d members, want 3: %+v", len(st.Members), st.Members)
	}
	// A restart after the recovery reads no file and keeps the new members.
	tc.kill(survivor)
	tc.connect()
	tc.start(survivor, nil)
	if st, err = tc.nodes[survivor].Status(); err != nil || len(st.Members) != 3 {
		t.Fatalf("after a restart the survivor sees %+v (%v), want the 3 members", st.Members, err)
	}
}

func TestRecoveryFileMistakesAreRefused(t *testing.T) {
	for name, c := range map[string]struct{ body, want string }{
		"not json":       {`members: a`, "must be"},
		"not this one":   {`{"members": [{"id": "other", "raft": "10.0.0.1:7610"}]}`, "does not list this member"},
		"no address":     {`{"members": [{"id": "solo"}]}`, "needs an id and a raft address"},
		"duplicate ids":  {`{"members": [{"id": "solo", "raft": "10.0.0.1:7610"}, {"id": "solo", "raft": "10.0.0.2:7610"}]}`, "needs an id and a raft address"},
		"duplicate raft": {`{"members": [{"id": "solo", "raft": "10.0.0.1:7610"}, {"id": "two", "raft": "10.0.0.1:7610"}]}`, "needs an id and a raft address"},
	} {
		dir := t.TempDir()
		writeRecovery(t, dir, c.body)
		_, tr := raft.NewInmemTransport("")
		n, err := Open(Config{ID: "solo", Transport: tr, Dir: dir, Raft: testRaftConfig()})
		if err == nil {
			_ = n.Shutdown()
			t.Errorf("%s: Open took the recovery file", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Open answered %q, want it to say %q", name, err, c.want)
		}
	}
	dir := t.TempDir()
	writeRecovery(t, dir, `{"members": [{"id": "solo", "raft": "10.0.0.1:7610"}]}`)
	_, tr := raft.NewInmemTransport("")
	if _, err := Open(Config{ID: "solo", Transport: tr, Dir: dir, Raft: testRaftConfig()}); err == nil || !strings.Contains(err.Error(), "holds no state") {
		t.Fatalf("a recovery with no state answered %v, want a refusal", err)
	}
}

// TestRecoveryKeepsQueuedAcquires: the recovery's snapshot holds the
// queue, so an acquire that waited before the quorum was lost still waits
// after it, and is granted when the slot frees.
func TestRecoveryKeepsQueuedAcquires(t *testing.T) {
	dir := t.TempDir()
	cfg := soloOnDisk(dir)
	n := openSolo(t, cfg)
	tc := &testCluster{t: t, nodes: []*Node{n}}
	_, held, b, _ := holdAndQueue(t, tc.leader(), "q1")
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	writeRecovery(t, dir, `{"members": [{"id": "solo", "raft": "`+string(cfg.Transport.LocalAddr())+`"}]}`)
	n, err := Open(cfg)
	if err != nil {
		t.Fatalf("a recovery with an acquire queued in the log: %v", err)
	}
	tc = &testCluster{t: t, nodes: []*Node{n}}
	t.Cleanup(func() { _ = n.Shutdown() })
	l := tc.leader()
	if q := queuedNow(l.fsm.Engine()); q != 1 {
		t.Fatalf("after the recovery %d acquires wait, want the 1 queued before it", q)
	}
	if _, err := l.Release(&engine.Call{Session: held.Session}, held.ID, engine.Report{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; queuedNow(l.fsm.Engine()) != 0; i++ {
		if i == 500 {
			t.Fatal("the recovered waiter was not granted within 5 s of the release")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := l.fsm.Engine().Stats(); got.Leases != 1 {
		t.Fatalf("after the release %d leases are held, want the recovered waiter's 1 (session %d)", got.Leases, b.ID)
	}
}
