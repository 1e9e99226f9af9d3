package cluster

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// deployment is one way to run the benchmarks' three members.
type deployment struct {
	name string
	open func(tb testing.TB, rc *raft.Config) *testCluster
}

// deployments are the members as the tests run them (in-memory log and
// transport, nothing on disk) and as governord runs them (raft-wal log in a
// data directory, synced on every append, and raft's TCP transport on
// loopback). The speed targets are judged by the second.
var deployments = []deployment{
	{"mem", func(tb testing.TB, rc *raft.Config) *testCluster {
		return newCluster(tb, 3, func(c *Config) { c.Raft = rc })
	}},
	{"disk+tcp", func(tb testing.TB, rc *raft.Config) *testCluster { return newTCPCluster(tb, 3, rc) }},
}

// newTCPCluster starts n members that bootstrap together over raft's TCP
// transport on 127.0.0.1 ports the system chose, each with its log in a
// data directory of its own, with raft config rc (nil is raft's default,
// as governord runs it). Its trans is nil: kill shuts a member down.
func newTCPCluster(tb testing.TB, n int, rc *raft.Config) *testCluster {
	tb.Helper()
	tc := &testCluster{t: tb, api: make(map[raft.ServerID]string)}
	trans, servers := tcpTransports(tb, n)
	for _, sv := range servers {
		tc.api[sv.ID] = string(sv.Address)
	}
	tb.Cleanup(tc.shutdown)
	for i, tr := range trans {
		n, err := Open(Config{ID: serverID(i), Transport: tr, Dir: tb.TempDir(), Raft: rc, Bootstrap: servers,
			ReapEvery: time.Hour, API: tc.api})
		if err != nil {
			tb.Fatal(err)
		}
		tc.nodes = append(tc.nodes, n)
	}
	return tc
}

// tcpTransports opens n raft TCP transports on 127.0.0.1 ports the system
// chose, and the configuration of n voters that use them.
func tcpTransports(tb testing.TB, n int) ([]*raft.NetworkTransport, []raft.Server) {
	tb.Helper()
	var trans []*raft.NetworkTransport
	var servers []raft.Server
	for i := range n {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 10*time.Second, io.Discard)
		if err != nil {
			tb.Fatal(err)
		}
		trans = append(trans, tr)
		servers = append(servers, raft.Server{ID: serverID(i), Address: tr.LocalAddr()})
	}
	return trans, servers
}

// newBareCluster starts n raft instances over an FSM that does nothing and
// returns the leader once there is one. Tuned, they run as newTCPCluster's
// members do (the same stores, transport and config); untuned, with raft's
// default config over a bare raft-wal store, as raft's own documentation
// starts them.
func newBareCluster(tb testing.TB, n int, tuned bool) *raft.Raft {
	tb.Helper()
	trans, servers := tcpTransports(tb, n)
	var rafts []*raft.Raft
	for i, tr := range trans {
		logs, w, snaps, err := openDiskStores(tb.TempDir(), hclog.NewNullLogger())
		if err != nil {
			tb.Fatal(err)
		}
		rc := DefaultRaftConfig()
		if !tuned {
			logs, rc = w, raft.DefaultConfig()
		}
		rc.LocalID, rc.Logger = serverID(i), hclog.NewNullLogger()
		if err := raft.BootstrapCluster(rc, logs, w, snaps, tr, raft.Configuration{Servers: servers}); err != nil {
			tb.Fatal(err)
		}
		r, err := raft.NewRaft(rc, nopFSM{}, logs, w, snaps, tr)
		if err != nil {
			tb.Fatal(err)
		}
		rafts = append(rafts, r)
		tb.Cleanup(func() {
			_ = r.Shutdown().Error()
			_ = w.Close()
		})
	}
	for range 3000 {
		for _, r := range rafts {
			if r.State() == raft.Leader {
				return r
			}
		}
		time.Sleep(10 * time.Millisecond) // polling for the election, not waiting for a result
	}
	tb.Fatal("no leader within 30 s")
	return nil
}

// nopFSM applies nothing and snapshots nothing.
type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nopSnapshot{}, nil }
func (nopFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

type nopSnapshot struct{}

func (nopSnapshot) Persist(s raft.SnapshotSink) error { return s.Close() }
func (nopSnapshot) Release()                          {}
