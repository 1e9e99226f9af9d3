package cluster

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// changeTimeout bounds how long a membership change or a transfer waits
// for raft.
const changeTimeout = 10 * time.Second

// Member is one server of the cluster's configuration, as Status reports
// it.
type Member struct {
	ID       raft.ServerID
	Raft     raft.ServerAddress
	API      string // empty when neither the log nor the file names it
	Suffrage raft.ServerSuffrage
	Leader   bool // as the member that answered knows
	Self     bool // the member that answered; only its indices are known
	// LastIndex and Applied are the last log index and the last applied
	// one, for Self; 0 for the others.
	LastIndex, Applied uint64
}

// Status is the cluster as one member sees it.
type Status struct {
	ID      raft.ServerID
	State   raft.RaftState
	Term    uint64
	Leader  raft.ServerID // empty when it knows of none
	Members []Member      // the latest configuration, by id
	Commit  uint64        // the last index it knows committed
}

// APIOf is member id's API address: the one the log recorded (OpMember),
// else the one this member's Config.API names; empty when neither does.
func (n *Node) APIOf(id raft.ServerID) string {
	if api, ok := n.fsm.MemberAPI(id); ok {
		return api
	}
	return n.cfg.API[id]
}

// Status describes the cluster as this member sees it. Any member answers.
func (n *Node) Status() (Status, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return Status{}, err
	}
	_, leader := n.raft.LeaderWithID()
	st := Status{ID: n.cfg.ID, State: n.raft.State(), Term: n.raft.CurrentTerm(), Leader: leader, Commit: n.raft.CommitIndex()}
	for _, s := range f.Configuration().Servers {
		m := Member{ID: s.ID, Raft: s.Address, API: n.APIOf(s.ID), Suffrage: s.Suffrage, Leader: s.ID == leader, Self: s.ID == n.cfg.ID}
		if m.Self {
			m.LastIndex, m.Applied = n.raft.LastIndex(), n.raft.AppliedIndex()
		}
		st.Members = append(st.Members, m)
	}
	slices.SortFunc(st.Members, func(a, b Member) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return st, nil
}

// changes serializes the membership changes and transfers a member makes,
// each from reading the configuration to raft's answer: raft takes one
// configuration change at a time, so the configuration a change was
// checked against is the one it applies to. (raft v1.8.0's
// GetConfiguration reports no index, so raft's own prevIndex check cannot
// be used.)
type changes struct{ mu sync.Mutex }

// leaderConfig locks n's changes and returns the latest configuration if this
// member leads, and *ErrNotLeader if it does not. The caller unlocks
// n.changes.mu once raft has answered.
func (n *Node) leaderConfig() (raft.Configuration, error) {
	n.changes.mu.Lock()
	if n.raft.State() != raft.Leader {
		return raft.Configuration{}, n.notLeader()
	}
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raft.Configuration{}, err
	}
	return f.Configuration(), nil
}

// AddVoter adds a voting member with its raft and API addresses, on the
// leader: first its API address goes in the log, so every member can name
// it once it leads, then the configuration change, checked against the
// configuration it applies to (see changes). Adding a member again with the
// same addresses changes nothing. It returns the log index of the
// configuration change, 0 when nothing changed.
func (n *Node) AddVoter(id raft.ServerID, addr raft.ServerAddress, api string) (uint64, error) {
	if err := checkNewMember(id, addr, api); err != nil {
		return 0, err
	}
	conf, err := n.leaderConfig()
	defer n.changes.mu.Unlock()
	if err != nil {
		return 0, err
	}
	for _, s := range conf.Servers {
		sAPI := n.APIOf(s.ID)
		same := s.ID == id && s.Address == addr && sAPI == api
		switch {
		case same && s.Suffrage == raft.Voter:
			return 0, nil
		case s.ID == id && !same:
			return 0, refuseMember("Member %s is already in the cluster, at raft address %s and API address %q: remove it first to add it with other addresses.", id, s.Address, sAPI)
		case s.Address == addr && s.ID != id:
			return 0, refuseMember("Raft address %s is already used by member %s: every member needs its own address.", addr, s.ID)
		case sAPI == api && s.ID != id:
			return 0, refuseMember("API address %s is already used by member %s: every member needs its own address.", api, s.ID)
		}
	}
	if _, _, err := n.apply(nil, &Command{Op: OpMember, Name: string(id), API: api}); err != nil {
		return 0, err
	}
	f := n.raft.AddVoter(id, addr, 0, changeTimeout)
	if err := f.Error(); err != nil {
		return 0, n.changeError(err)
	}
	return f.Index(), nil
}

// checkNewMember checks a new member's id and addresses.
func checkNewMember(id raft.ServerID, addr raft.ServerAddress, api string) error {
	if id == "" {
		return badMember("The new member needs an id, unique in the cluster: the node_id of its cluster section.")
	}
	for _, a := range []struct{ name, value string }{{"raft", string(addr)}, {"API", api}} {
		if _, port, err := net.SplitHostPort(a.value); err != nil || port == "" {
			return badMember("The new member's %s address must be host:port that the other members can reach, such as 10.0.0.4:7610; got %q.", a.name, a.value)
		}
	}
	return nil
}

// RemoveServer removes member id from the cluster, on the leader, checked
// against the configuration it applies to (see changes). The leader does
// not remove itself (it would lead a cluster it is not in until it steps
// down: transfer the leadership first), so the last voter, the leader,
// stays. Its API address leaves the log's table in the same log entry
// (FSM.StoreConfiguration), so a removal raft committed is a success.
// It returns the log index of the configuration change.
func (n *Node) RemoveServer(id raft.ServerID) (uint64, error) {
	conf, err := n.leaderConfig()
	defer n.changes.mu.Unlock()
	if err != nil {
		return 0, err
	}
	at := slices.IndexFunc(conf.Servers, func(s raft.Server) bool { return s.ID == id })
	switch {
	case at < 0:
		return 0, refuseMember("No member of the cluster has id %q; its members are %s.", id, memberIDs(conf))
	case id == n.cfg.ID && voters(conf) == 1:
		return 0, refuseMember("Member %s is the cluster's last voter: a cluster without one can decide nothing.", id)
	case id == n.cfg.ID:
		return 0, refuseMember("Member %s leads the cluster and does not remove itself: transfer the leadership first (governor cluster transfer), then remove it at the new leader.", id)
	}
	f := n.raft.RemoveServer(id, 0, changeTimeout)
	if err := f.Error(); err != nil {
		return 0, n.changeError(err)
	}
	return f.Index(), nil
}

// TransferLeadership hands the leadership to voter id, or, with an empty
// id, to the voter raft finds most up to date, for a planned restart, and
// waits until the transfer ends. It returns the member that leads then,
// once this one hears of it (up to changeTimeout; "" if it has not heard).
// Calls that arrive on this member meanwhile are held and then answered
// with *ErrNotLeader naming the new leader (or taken here, if the transfer
// failed), so a client that follows the hint sees no refusal; the transfer
// begins once every command already in the log is answered, so none ends
// with ErrUnknownOutcome. On a member that does not lead it fails with
// *ErrNotLeader.
func (n *Node) TransferLeadership(id raft.ServerID) (raft.ServerID, error) {
	conf, err := n.leaderConfig()
	defer n.changes.mu.Unlock()
	if err != nil {
		return "", err
	}
	var start func() raft.Future
	switch at := slices.IndexFunc(conf.Servers, func(s raft.Server) bool { return s.ID == id }); {
	case id == "":
		if voters(conf) < 2 {
			return "", refuseMember("The cluster has no other voter to take the leadership: add a member first (governor cluster add).")
		}
		start = n.raft.LeadershipTransfer
	case at < 0:
		return "", refuseMember("No member of the cluster has id %q; its members are %s.", id, memberIDs(conf))
	case id == n.cfg.ID:
		return "", refuseMember("Member %s leads the cluster already.", id)
	case conf.Servers[at].Suffrage != raft.Voter:
		return "", refuseMember("Member %s does not vote, so it cannot lead: name a voter.", id)
	default:
		addr := conf.Servers[at].Address
		start = func() raft.Future { return n.raft.LeadershipTransferToServer(id, addr) }
	}
	n.leading.moving.Store(true)
	n.leading.inLog.Lock() // waits for the commands in flight
	n.leading.inLog.Unlock()
	defer func() {
		n.leading.moving.Store(false)
		n.leading.signal()
	}()
	if err := n.await(start()); err != nil {
		return "", n.changeError(err)
	}
	return n.nextLeader(changeTimeout), nil
}

// nextLeader waits up to d for this member to know a leader other than
// itself, and returns it; "" if none came. It looks again at each change
// the member's watch signals (leading).
func (n *Node) nextLeader(d time.Duration) raft.ServerID {
	timeout := time.After(d)
	for {
		changed := n.leading.next()
		if _, id := n.raft.LeaderWithID(); id != "" && id != n.cfg.ID {
			return id
		}
		select {
		case <-changed:
		case <-timeout:
			return ""
		}
	}
}

// changeError is what a membership change or a transfer that raft refused
// returns: *ErrNotLeader when this member does not lead or is handing the
// leadership over, else ErrUnknownOutcome. A command's failure
// (applyFailed) ends here too.
func (n *Node) changeError(err error) error {
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
		return n.notLeader()
	}
	return fmt.Errorf("%w: %w", ErrUnknownOutcome, err)
}

func voters(c raft.Configuration) int {
	v := 0
	for _, s := range c.Servers {
		if s.Suffrage == raft.Voter {
			v++
		}
	}
	return v
}

func memberIDs(c raft.Configuration) string {
	ids := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		ids[i] = string(s.ID)
	}
	slices.Sort(ids)
	return strings.Join(ids, ", ")
}

// announce puts this member's API address (Config.API[ID]) in the log's
// table when the table does not hold it yet, as a new leader does once in
// its term: a member added through a file on its own host is in no other
// member's file, and every member names it to clients once it leads.
func (n *Node) announce() error {
	api := n.cfg.API[n.cfg.ID]
	if have, _ := n.fsm.MemberAPI(n.cfg.ID); api == "" || have == api {
		return nil
	}
	_, _, err := n.submit(nil, &Command{Op: OpMember, Name: string(n.cfg.ID), API: api})
	return err
}
