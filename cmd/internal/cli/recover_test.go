package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"governor.dev/governor/cmd/internal/cluster"
	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/cmd/internal/daemon"
	"governor.dev/governor/internal/clientconn"
)

// TestRecoveryAfterLosingTwoOfThree follows docs/cluster.md, "Losing a
// majority", with governord members and the governor binary: two of three
// members go for good, the survivor restarts with a recovery file, leads
// alone with every acknowledged charge, and a new member joins through
// `governor cluster add`.
func TestRecoveryAfterLosingTwoOfThree(t *testing.T) {
	addrs, peers, fresh := clusterPeers(t)
	var cfgs []*config.Config
	var ds []*daemon.Daemon
	for _, p := range peers {
		cfg := memberConfig(t, p.ID, p.API, peers, true)
		cfgs = append(cfgs, cfg)
		ds = append(ds, startGovernord(t, cfg))
	}
	admin := []string{clientconn.EnvAddr + "=" + strings.Join(addrs[:3], ","), clientconn.EnvAPIKey + "=" + adminKey}
	team := []string{clientconn.EnvAddr + "=" + strings.Join(addrs[:3], ","), clientconn.EnvAPIKey + "=" + teamAKey}
	waitFor(t, func() bool { return governor(t, team, nil, "describe").code == 0 }) // the leader seeded the tenants
	mustContain(t, governor(t, team, nil, "consume", ".", "tool_calls", "2"), 0, "consumed 2 tool_calls")
	// The survivor must hold what was acknowledged: wait until it applied
	// as far as the leader's log reached after the consume.
	target := maxLast(governor(t, admin, nil, "cluster", "status").stdout)
	waitFor(t, func() bool { return applied(governor(t, admin, nil, "cluster", "status").stdout, "n2") >= target })

	for _, d := range ds {
		stopGovernord(t, d)
	}
	survivor := cfgs[2]
	recovery := `{"members": [{"id": "n2", "raft": "` + peers[2].Raft + `"}]}`
	if err := os.WriteFile(filepath.Join(survivor.Cluster.DataDir, cluster.RecoveryFile), []byte(recovery), 0o600); err != nil {
		t.Fatal(err)
	}
	startGovernord(t, survivor)
	alone := []string{clientconn.EnvAddr + "=" + peers[2].API, clientconn.EnvAPIKey + "=" + adminKey}
	waitFor(t, func() bool { return leaderRow(governor(t, alone, nil, "cluster", "status").stdout) == "n2" })
	aloneTeam := []string{alone[0], clientconn.EnvAPIKey + "=" + teamAKey}
	waitFor(t, func() bool { return governor(t, aloneTeam, nil, "describe").code == 0 })
	mustContain(t, governor(t, aloneTeam, nil, "describe"), 0, "tool_calls 2\n")

	startGovernord(t, memberConfig(t, fresh.ID, fresh.API, []config.Peer{fresh}, false))
	mustContain(t, governor(t, alone, nil, "cluster", "add", fresh.ID, fresh.Raft, fresh.API), 0, "added n3")
	r := governor(t, alone, nil, "cluster", "status")
	if strings.Count(r.stdout, "voter") != 2 || !strings.Contains(r.stdout, fresh.API) {
		t.Fatalf("after the recovery and an add:\n%s", r)
	}
	target = maxLast(r.stdout)
	waitFor(t, func() bool { return applied(governor(t, alone, nil, "cluster", "status").stdout, "n3") >= target })
}

// rows returns the member rows of status output by id: the table's fields.
func rows(status string) map[string][]string {
	out := map[string][]string{}
	for _, l := range strings.Split(status, "\n") {
		if f := strings.Fields(l); len(f) == 7 && f[3] == "voter" {
			out[f[0]] = f
		}
	}
	return out
}

// applied is member id's APPLIED in status output, 0 when unknown.
func applied(status, id string) uint64 {
	f, ok := rows(status)[id]
	if !ok {
		return 0
	}
	v, _ := strconv.ParseUint(f[6], 10, 64)
	return v
}

// maxLast is the largest LAST in status output.
func maxLast(status string) uint64 {
	var m uint64
	for _, f := range rows(status) {
		v, _ := strconv.ParseUint(f[5], 10, 64)
		m = max(m, v)
	}
	return m
}
