package daemon

import (
	"os"
	"strings"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/config"
)

// The cluster section's raft timing reaches the member's raft.
func TestMemberRunsWithTheFilesRaftTiming(t *testing.T) {
	files, _ := clusterFiles(t, t.TempDir(), 1)
	raw, err := os.ReadFile(files[0])
	must(t, err)
	timing := "cluster:\n  heartbeat_timeout: 300ms\n  election_timeout: 400ms\n  leader_lease_timeout: 150ms\n  snapshot_interval: 30s\n  snapshot_threshold: 100\n"
	must(t, os.WriteFile(files[0], []byte(strings.Replace(string(raw), "cluster:\n", timing, 1)), 0o600))
	cfg, err := config.Load(files[0])
	must(t, err)
	d := startDaemon(t, cfg, Options{})
	rc := d.member.node.Raft().ReloadableConfig()
	if rc.HeartbeatTimeout != 300*time.Millisecond || rc.ElectionTimeout != 400*time.Millisecond ||
		rc.SnapshotInterval != 30*time.Second || rc.SnapshotThreshold != 100 {
		t.Fatalf("the member's raft runs with %+v, not the file's timing", rc)
	}
}
