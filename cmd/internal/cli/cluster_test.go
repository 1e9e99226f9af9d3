package cli_test

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/internal/clientconn"
)

// memberConfig is member id's configuration: its API on api, its raft
// transport on peers' entry for id.
func memberConfig(t *testing.T, id, api string, peers []config.Peer, bootstrap bool) *config.Config {
	cfg := testConfig("")
	cfg.Listen = api
	cfg.Cluster = config.Cluster{NodeID: id, DataDir: filepath.Join(t.TempDir(), id), Bootstrap: bootstrap, Peers: peers}
	return cfg
}

// clusterPeers returns the members n0 to n2 of a cluster and a fourth,
// n3, on loopback ports that were free a moment ago (members must know
// each other's addresses before they start): member i's API on addrs[i],
// its raft transport on addrs[4+i].
func clusterPeers(t *testing.T) (addrs []string, peers []config.Peer, fourth config.Peer) {
	t.Helper()
	for range 8 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		defer ln.Close()
	}
	for i := range 3 {
		peers = append(peers, config.Peer{ID: fmt.Sprintf("n%d", i), API: addrs[i], Raft: addrs[4+i]})
	}
	return addrs, peers, config.Peer{ID: "n3", API: addrs[3], Raft: addrs[7]}
}

// TestClusterVerbs runs three governord members and a fourth started on its
// own, then lists, adds, hands over the leadership and removes through
// the governor binary, as an operator would.
func TestClusterVerbs(t *testing.T) {
	addrs, peers, fourth := clusterPeers(t)
	for _, p := range peers {
		startGovernord(t, memberConfig(t, p.ID, p.API, peers, true))
	}
	startGovernord(t, memberConfig(t, fourth.ID, fourth.API, []config.Peer{fourth}, false))

	env := []string{clientconn.EnvAddr + "=" + strings.Join(addrs[:3], ","), clientconn.EnvAPIKey + "=" + adminKey}
	waitFor(t, func() bool { return leaderRow(governor(t, env, nil, "cluster", "status").stdout) != "" })
	r := governor(t, env, nil, "cluster", "status")
	mustContain(t, r, 0, "ID", "RAFT", "API", "SUFFRAGE", "ROLE", "LAST", "APPLIED")
	for _, p := range peers {
		mustContain(t, r, 0, p.ID, p.Raft, p.API)
	}
	if rows := strings.Count(r.stdout, "voter"); rows != 3 {
		t.Fatalf("status lists %d voters, want 3:\n%s", rows, r)
	}
	// Each member answers for its own indices, followers too, once it has
	// applied an entry.
	waitFor(t, func() bool { return allAnswered(governor(t, env, nil, "cluster", "status").stdout) })

	mustContain(t, governor(t, env, nil, "cluster", "add", fourth.ID, fourth.Raft, fourth.API), 0, "added n3")
	mustContain(t, governor(t, env, nil, "cluster", "add", "n4", fourth.Raft, "127.0.0.1:1"), 1, "already used by member n3")
	mustContain(t, governor(t, env, nil, "cluster", "transfer", fourth.ID), 0, "n3 leads now, API at "+fourth.API)
	// The old members name the new one's API address, which only the log
	// told them: the verbs reach it through them.
	r = governor(t, env, nil, "cluster", "status")
	mustContain(t, r, 0, fourth.API)
	if leaderRow(r.stdout) != fourth.ID {
		t.Fatalf("status does not show n3 leading:\n%s", r)
	}
	mustContain(t, governor(t, env, nil, "cluster", "remove", fourth.ID), 1, "transfer the leadership first")
	mustContain(t, governor(t, env, nil, "cluster", "remove", "n0"), 0, "removed n0")
	mustContain(t, governor(t, env, nil, "cluster", "remove", "nobody"), 1, `No member of the cluster has id "nobody"`)
	r = governor(t, env, nil, "cluster", "status")
	if strings.Contains(r.stdout, peers[0].Raft) || strings.Count(r.stdout, "voter") != 3 {
		t.Fatalf("status after removing n0:\n%s", r)
	}
	tenant := []string{clientconn.EnvAddr + "=" + addrs[1], clientconn.EnvAPIKey + "=" + teamAKey}
	mustContain(t, governor(t, tenant, nil, "cluster", "status"), 1, "admin key")
}

// TestClusterVerbsOnASingleGovernord: a governord that runs alone says so.
func TestClusterVerbsOnASingleGovernord(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	mustContain(t, governor(t, envFor(d, adminKey), nil, "cluster", "status"), 1, "not a cluster member")
	mustContain(t, governor(t, envFor(d, adminKey), nil, "cluster", "add", "x"), 2, "usage")
}

// allAnswered reports whether every member row of status output shows
// its log indices.
func allAnswered(status string) bool {
	members := rows(status)
	for _, f := range members {
		if f[5] == "-" || f[6] == "-" {
			return false
		}
	}
	return len(members) > 0
}

// leaderRow is the id in the row of status output whose ROLE is leader,
// or "".
func leaderRow(status string) string {
	for id, f := range rows(status) {
		if f[4] == "leader" {
			return id
		}
	}
	return ""
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the cluster did not come to the state waited for within 60 s")
		}
		time.Sleep(100 * time.Millisecond) // polling a cluster of processes for its election
	}
}
