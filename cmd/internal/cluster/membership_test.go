package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// joinAlone starts one more member, empty, whose Config.API names only its
// own API address, as a member started from a file on its own host does:
// no other member's file names it. Its raft address has the form of
// host:port, as AddVoter wants.
func (tc *testCluster) joinAlone(api string) (*Node, raft.ServerAddress) {
	tc.t.Helper()
	i := len(tc.nodes)
	_, tr := raft.NewInmemTransport(raft.ServerAddress(fmt.Sprintf("127.0.0.1:%d", 7100+i)))
	tc.trans = append(tc.trans, tr)
	tc.connect()
	n, err := Open(Config{ID: serverID(i), Transport: tr, API: map[raft.ServerID]string{serverID(i): api}, Raft: testRaftConfig(), ReapEvery: time.Hour})
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.nodes = append(tc.nodes, n)
	return n, tr.LocalAddr()
}

// fourthAPI is the API address of the member fourthVoter adds.
const fourthAPI = "127.0.0.1:7997"

// fourthVoter starts three members and adds a fourth, started alone
// (joinAlone) with the API address fourthAPI. It returns the cluster, the
// fourth member, its raft address and the leader that added it.
func fourthVoter(t *testing.T) (*testCluster, *Node, raft.ServerAddress, *Node) {
	t.Helper()
	tc := newCluster(t, 3, nil)
	n3, addr := tc.joinAlone(fourthAPI)
	l := tc.leader()
	if _, err := l.AddVoter(n3.cfg.ID, addr, fourthAPI); err != nil {
		t.Fatal(err)
	}
	return tc, n3, addr, l
}

// configuration is the servers of n's latest configuration, printed.
func configuration(t *testing.T, n *Node) string {
	t.Helper()
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(f.Configuration().Servers)
}

// hint is the leader's API address a member names to a call it refuses.
func hint(t *testing.T, n *Node) string {
	t.Helper()
	var nl *ErrNotLeader
	if err := n.Consume(&engine.Call{}, engine.RootID, "tokens", 1); !errors.As(err, &nl) {
		t.Fatalf("member %s answered %v, want *ErrNotLeader", n.cfg.ID, err)
	}
	return nl.Leader
}

// waitLeader waits until every live member knows want as the leader.
func (tc *testCluster) waitLeader(want raft.ServerID) {
	tc.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range tc.liveNodes() {
		for _, id := n.raft.LeaderWithID(); id != want; _, id = n.raft.LeaderWithID() {
			if time.Now().After(deadline) {
				tc.t.Fatalf("member %s knows %q as the leader, not %s, after 30 s", n.cfg.ID, id, want)
			}
			tc.waitChange()
		}
	}
}

// TestAddedMemberIsNamedByItsAPIAddress adds a member no other member's
// file names, with its API address, and hands it the leadership: every
// other member must name that API address, not its raft address nor
// nothing, to the calls it refuses, before the new leader served a call.
func TestAddedMemberIsNamedByItsAPIAddress(t *testing.T) {
	tc := newCluster(t, 3, nil)
	const api = "127.0.0.1:7999"
	n3, addr := tc.joinAlone(api)
	l := tc.leader()
	if _, err := l.AddVoter(n3.cfg.ID, addr, api); err != nil {
		t.Fatal(err)
	}
	if !tc.converged() {
		t.Fatal("the added member's state differs from the leader's")
	}
	if _, err := l.TransferLeadership(n3.cfg.ID); err != nil {
		t.Fatal(err)
	}
	tc.waitLeader(n3.cfg.ID)
	for _, n := range tc.nodes[:3] {
		if got := hint(t, n); got != api {
			t.Errorf("member %s names the leader %q, want its API address %s", n.cfg.ID, got, api)
		}
	}
}

// TestNewLeaderAnnouncesItsAPIAddress adds a member through raft alone,
// with no API address in the log: once it leads and serves a call, it puts
// its own in the log, and the others name it.
func TestNewLeaderAnnouncesItsAPIAddress(t *testing.T) {
	tc := newCluster(t, 3, nil)
	const api = "127.0.0.1:7998"
	n3, addr := tc.joinAlone(api)
	if err := tc.leader().raft.AddVoter(n3.cfg.ID, addr, 0, 10*time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	tc.converged()
	if _, err := tc.leader().TransferLeadership(n3.cfg.ID); err != nil {
		t.Fatal(err)
	}
	tc.waitLeader(n3.cfg.ID)
	if _, err := n3.OpenSession(&engine.Call{}, engine.RootID, time.Minute, [32]byte{9}); err != nil {
		t.Fatal(err)
	}
	tc.converged()
	for _, n := range tc.nodes[:3] {
		if got := hint(t, n); got != api {
			t.Errorf("member %s names the leader %q, want the API address %s it announced", n.cfg.ID, got, api)
		}
	}
}

// TestMembershipChangesOnlyOnTheLeader asks a follower for each change:
// it refuses with the leader's API address and changes nothing, even for
// a change the leader would make (removing that follower).
func TestMembershipChangesOnlyOnTheLeader(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l, f := tc.leader(), tc.follower()
	tc.waitLeader(l.cfg.ID)
	before := configuration(t, l)
	want := tc.api[l.cfg.ID]
	_, addErr := f.AddVoter("n9", "10.0.0.9:7610", "10.0.0.9:7600")
	_, removeErr := f.RemoveServer(f.cfg.ID)
	_, transferErr := f.TransferLeadership("")
	for name, err := range map[string]error{"add": addErr, "remove": removeErr, "transfer": transferErr} {
		var nl *ErrNotLeader
		if !errors.As(err, &nl) || nl.Leader != want {
			t.Errorf("%s on a follower answered %v, want *ErrNotLeader naming %s", name, err, want)
		}
	}
	if got := configuration(t, l); got != before {
		t.Fatalf("the configuration changed from %s to %s", before, got)
	}
}

func TestAddVoterRefusesBadOrClashingMembers(t *testing.T) {
	tc, _, addr, l := fourthVoter(t)
	other := tc.nodes[(indexOf(tc, l)+1)%3]
	before := configuration(t, l)
	for name, c := range map[string]struct {
		id   raft.ServerID
		addr raft.ServerAddress
		api  string
		want error
	}{
		"no id":            {"", "10.0.0.9:7610", "10.0.0.9:7600", ErrBadMember},
		"raft not address": {"n9", "n9", "10.0.0.9:7600", ErrBadMember},
		"api not address":  {"n9", "10.0.0.9:7610", "10.0.0.9", ErrBadMember},
		"raft in use":      {"n9", addr, "10.0.0.9:7600", ErrMembership},
		"api in use":       {"n9", "10.0.0.9:7610", tc.api[other.cfg.ID], ErrMembership},
		"id in use":        {other.cfg.ID, "10.0.0.9:7610", "10.0.0.9:7600", ErrMembership},
	} {
		if _, err := l.AddVoter(c.id, c.addr, c.api); !errors.Is(err, c.want) {
			t.Errorf("%s: AddVoter answered %v, want %v", name, err, c.want)
		}
	}
	if got := configuration(t, l); got != before {
		t.Fatalf("a refused change changed the configuration from %s to %s", before, got)
	}
	if _, ok := l.fsm.MemberAPI("n9"); ok {
		t.Fatal("a refused member's API address is in the log's table")
	}
}

func indexOf(tc *testCluster, n *Node) int {
	for i, m := range tc.nodes {
		if m == n {
			return i
		}
	}
	return -1
}

func TestRemoveServerRefusesWhatWouldHarmTheCluster(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	before := configuration(t, l)
	for name, id := range map[string]raft.ServerID{"unknown": "n9", "the leader itself": l.cfg.ID} {
		if _, err := l.RemoveServer(id); !errors.Is(err, ErrMembership) {
			t.Errorf("removing %s answered %v, want ErrMembership", name, err)
		}
	}
	if got := configuration(t, l); got != before {
		t.Fatalf("a refused removal changed the configuration from %s to %s", before, got)
	}
	solo := newCluster(t, 1, nil).leader()
	if _, err := solo.RemoveServer(solo.cfg.ID); !errors.Is(err, ErrMembership) {
		t.Fatalf("removing the last voter answered %v, want ErrMembership", err)
	}
}

// TestRemoveServerLeavesTheOthersServing removes a follower: the status
// no longer lists it, its API address leaves the table, and the others
// still commit.
func TestRemoveServerLeavesTheOthersServing(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l, f := tc.leader(), tc.follower()
	if _, err := l.RemoveServer(f.cfg.ID); err != nil {
		t.Fatal(err)
	}
	st, err := l.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Members) != 2 {
		t.Fatalf("status lists %d members after a removal, want 2: %+v", len(st.Members), st.Members)
	}
	for _, m := range st.Members {
		if m.ID == f.cfg.ID {
			t.Fatalf("status still lists the removed member %s", f.cfg.ID)
		}
	}
	if api, ok := l.fsm.MemberAPI(f.cfg.ID); ok {
		t.Fatalf("the removed member's API address %s is still in the table", api)
	}
	s, nd := tenant(t, l)
	if err := l.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1); err != nil {
		t.Fatal(err)
	}
}

// TestRemovalTakesTheAPIAddressInItsOwnEntry adds a member with its API
// address in the log and removes it: the removal succeeds, is the last
// entry of the log (no table update follows it, so none can fail after
// it), and every replica's table has lost the address once it applied the
// removal.
func TestRemovalTakesTheAPIAddressInItsOwnEntry(t *testing.T) {
	tc, n3, _, l := fourthVoter(t)
	index, err := l.RemoveServer(n3.cfg.ID)
	if err != nil {
		t.Fatalf("a removal raft committed answered %v", err)
	}
	if last := l.raft.LastIndex(); last != index {
		t.Fatalf("the log runs to index %d past the removal at %d: the table was updated in another entry", last, index)
	}
	tc.kill(3) // out of the cluster, it applies no more
	if !tc.converged() {
		t.Fatal("replicas differ after the removal")
	}
	for _, n := range tc.liveNodes() {
		if api, ok := n.fsm.MemberAPI(n3.cfg.ID); ok {
			t.Errorf("member %s still knows the removed member's API address %s", n.cfg.ID, api)
		}
	}
}

// TestConfigurationEntryDropsMembersItDoesNotList applies a configuration
// entry to a replica whose table names three members: the one it does not
// list leaves the table, the others keep their addresses.
func TestConfigurationEntryDropsMembersItDoesNotList(t *testing.T) {
	f := NewFSM()
	for i, c := range []*Command{{Op: OpMember, Name: "x", API: "10.0.0.1:7600"}, {Op: OpMember, Name: "y", API: "10.0.0.2:7600"}, {Op: OpMember, Name: "z", API: "10.0.0.3:7600"}} {
		f.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: c.Encode()})
	}
	f.StoreConfiguration(4, raft.Configuration{Servers: []raft.Server{{ID: "x", Address: "10.0.0.1:7610"}, {ID: "y", Address: "10.0.0.2:7610", Suffrage: raft.Nonvoter}}})
	for id, want := range map[raft.ServerID]string{"x": "10.0.0.1:7600", "y": "10.0.0.2:7600", "z": ""} {
		if api, _ := f.MemberAPI(id); api != want {
			t.Errorf("after the configuration entry member %s's API address is %q, want %q", id, api, want)
		}
	}
}

func TestTransferLeadership(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	for name, id := range map[string]raft.ServerID{"unknown": "n9", "itself": l.cfg.ID} {
		if _, err := l.TransferLeadership(id); !errors.Is(err, ErrMembership) {
			t.Errorf("a transfer to %s answered %v, want ErrMembership", name, err)
		}
	}
	to := tc.follower().cfg.ID
	got, err := l.TransferLeadership(to)
	if err != nil {
		t.Fatal(err)
	}
	tc.waitLeader(to)
	if got != to {
		t.Fatalf("the transfer to %s reports %s leading", to, got)
	}
	next := tc.leader()
	if _, err := next.TransferLeadership(""); err != nil {
		t.Fatal(err)
	}
	if tc.leader() == next {
		t.Fatal("after a transfer to any member, the same member leads")
	}
	if _, err := newCluster(t, 1, nil).leader().TransferLeadership(""); !errors.Is(err, ErrMembership) {
		t.Fatalf("a transfer in a one-member cluster answered %v, want ErrMembership", err)
	}
}

func TestStatusDescribesEveryMember(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	tc.converged()
	f := tc.follower()
	st, err := f.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != f.cfg.ID || st.State != raft.Follower || st.Leader != l.cfg.ID || st.Term == 0 || len(st.Members) != 3 {
		t.Fatalf("a follower's status is %+v", st)
	}
	if st.Commit == 0 {
		t.Errorf("a follower of a cluster that committed entries reports commit index 0: %+v", st)
	}
	for _, m := range st.Members {
		if m.API != tc.api[m.ID] || m.Leader != (m.ID == l.cfg.ID) || m.Self != (m.ID == f.cfg.ID) || m.Suffrage != raft.Voter {
			t.Errorf("member row %+v is wrong", m)
		}
		if m.Self && (m.LastIndex == 0 || m.Applied == 0) {
			t.Errorf("the answering member's own indices are unknown: %+v", m)
		}
	}
}

// TestMemberTableIsInTheSnapshot restores a replica from a snapshot taken
// after OpMember commands: it must know the same API addresses.
func TestMemberTableIsInTheSnapshot(t *testing.T) {
	a, b := NewFSM(), NewFSM()
	for i, c := range []*Command{{Op: OpMember, Name: "x", API: "10.0.0.1:7600"}, {Op: OpMember, Name: "y", API: "10.0.0.2:7600"}, {Op: OpMember, Name: "x"}} {
		a.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: c.Encode()})
	}
	if err := b.Restore(io.NopCloser(bytes.NewReader(persist(t, a)))); err != nil {
		t.Fatal(err)
	}
	if api, ok := b.MemberAPI("y"); api != "10.0.0.2:7600" {
		t.Fatalf("the restored replica knows y's API address as %q (%v), want 10.0.0.2:7600", api, ok)
	}
	if _, ok := b.MemberAPI("x"); ok {
		t.Fatal("the restored replica knows a member the log forgot")
	}
}

// TestConcurrentAddsAreCheckedOneByOne adds two members with the same API
// address at once: each change is checked against the configuration it
// applies to, so exactly one is added.
func TestConcurrentAddsAreCheckedOneByOne(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	errs := make(chan error, 2)
	for _, id := range []raft.ServerID{"x", "y"} {
		go func() {
			_, err := l.AddVoter(id, raft.ServerAddress("10.0.0.9:"+map[raft.ServerID]string{"x": "7610", "y": "7611"}[id]), "10.0.0.9:7600")
			errs <- err
		}()
	}
	var refused int
	for range 2 {
		if err := <-errs; errors.Is(err, ErrMembership) {
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if refused != 1 {
		t.Fatalf("%d of two adds with the same API address were refused, want 1: %s", refused, configuration(t, l))
	}
}

// TestAddVoterAgainChangesNothing adds a member twice with the same
// addresses: the second call succeeds at once, with no configuration
// change (index 0), and the configuration stays as it was.
func TestAddVoterAgainChangesNothing(t *testing.T) {
	_, n3, addr, l := fourthVoter(t)
	before := configuration(t, l)
	if at, err := l.AddVoter(n3.cfg.ID, addr, fourthAPI); at != 0 || err != nil {
		t.Fatalf("adding member %s again answered index %d and %v, want 0 and nil", n3.cfg.ID, at, err)
	}
	if got := configuration(t, l); got != before {
		t.Fatalf("adding a member again changed the configuration from %s to %s", before, got)
	}
}
