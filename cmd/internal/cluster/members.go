package cluster

import (
	"maps"
	"slices"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/encoding/protowire"
)

// members is the replicated table of each member's API address by id, which
// OpMember commands fill: a member added through the API is in no other
// member's file, yet every member must name its API address to clients
// while it leads. It is in the snapshot, so a member restored from one
// knows it too.
type members map[raft.ServerID]string

// setMember records id's API address, or forgets id when api is empty.
func (f *FSM) setMember(id raft.ServerID, api string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if api == "" {
		delete(f.members, id)
		return
	}
	f.members[id] = api
}

// StoreConfiguration drops from the table every member the configuration
// committed at index does not list, on every replica as it applies that
// entry (raft.ConfigurationStore). A removed member's API address so
// leaves the table in the removal's own log entry: no later command has
// to succeed for it, and none can fail after the removal did. An address
// logged for a member whose addition never committed leaves at the next
// configuration change. raft runs it on the FSM goroutine, like Apply.
func (f *FSM) StoreConfiguration(_ uint64, conf raft.Configuration) {
	in := make(map[raft.ServerID]bool, len(conf.Servers))
	for _, s := range conf.Servers {
		in[s.ID] = true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	maps.DeleteFunc(f.members, func(id raft.ServerID, _ string) bool { return !in[id] })
}

// MemberAPI returns the API address the log recorded for member id, and
// whether it recorded one.
func (f *FSM) MemberAPI(id raft.ServerID) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	api, ok := f.members[id]
	return api, ok
}

// copyMembers returns a copy of the table, for a snapshot.
func (f *FSM) copyMembers() members {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.members)
}

// restoreMembers replaces the table with one read from a snapshot.
func (f *FSM) restoreMembers(m members) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.members = m
}

// appendMembers writes the table in a snapshot: for each member by id, a
// message {1 id, 2 api}.
func appendMembers(b []byte, m members) []byte {
	w := &writer{b: b}
	for _, id := range slices.Sorted(maps.Keys(m)) {
		w.msg(1, func(b []byte) []byte {
			mw := &writer{b: b}
			mw.str(1, string(id))
			mw.str(2, m[id])
			return mw.b
		})
	}
	return w.b
}

// decodeMembers reads what appendMembers wrote.
func decodeMembers(b []byte) (members, error) {
	m := members{}
	r := &reader{}
	r.fields(b, func(fl field) {
		if fl.num != 1 {
			return
		}
		var id, api string
		r.fields(r.msg(fl), func(fl field) {
			switch fl.num {
			case 1:
				id = r.str(fl)
			case 2:
				api = r.str(fl)
			}
		})
		if id == "" || api == "" {
			r.fail("a member in the snapshot lacks its id or its API address")
			return
		}
		m[raft.ServerID(id)] = api
	})
	return m, r.err
}

// memberSection is the snapshot's part after the header: the member table,
// length-prefixed.
func memberSection(m members) []byte {
	return protowire.AppendBytes(nil, appendMembers(nil, m))
}
