package daemon

import (
	"context"
	"testing"
)

// Three governord processes form a cluster; a client with all three
// addresses consumes while every member is killed with SIGKILL, so entries
// are caught between being stored and being applied on each of them. The
// three restart from their data directories, and every acknowledged
// consume is in the usage they answer with: what a member acknowledged was
// in the logs on disk.
func TestClusterProcessesKeepWhatTheyAcknowledgedWhenAllAreKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three governord processes twice")
	}
	dir := t.TempDir()
	files, apis := clusterFiles(t, dir, 3)
	procs := startMembers(t, dir, files)
	c := newClusterAPI(apis)
	l := startLoadOn(t, c, 4)
	l.waitFor(t, 300, "before the kill")
	lead := c.leader(context.Background())
	if lead < 0 {
		t.Fatal("no member answers as the leader")
	}
	procs[lead].Kill()
	for i, p := range procs {
		if i != lead {
			p.Kill()
		}
	}
	acked, sent := l.stop()
	startMembers(t, dir, files)
	verifyOn(t, c, acked, sent)
	t.Logf("all three members killed under load, leader %d first, and restarted; %d consumes acknowledged", lead, l.total())
}
