package daemon

import (
	"context"
	"testing"

	"governor.dev/governor/internal/testbin"
)

// Three governord processes form a cluster; a client with all three
// addresses consumes while the leader is killed with SIGKILL. Consumes
// continue through the two survivors, and every acknowledged consume is in
// their usage. The killed member restarts from its data directory and
// catches up: with the third member killed too, the restarted member is in
// every quorum, and consumes go on with every acknowledged one in the usage.
func TestClusterProcessesSurviveLeaderKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three governord processes")
	}
	dir := t.TempDir()
	files, apis := clusterFiles(t, dir, 3)
	procs := startMembers(t, dir, files)
	ctx := context.Background()
	c := newClusterAPI(apis)
	l := startLoadOn(t, c, 4)
	l.waitFor(t, 100, "before the kill")
	first := c.leader(ctx)
	if first < 0 {
		t.Fatal("no member answers as the leader")
	}
	procs[first].Kill()
	killedAt := l.total()
	l.waitFor(t, killedAt+100, "after the leader was killed")
	acked, sent := l.stop()
	verifyOn(t, c, acked, sent)

	procs[first] = startProc(t, dir, nil, "-config", files[first])
	procs[first].Serving()
	lead := c.leader(ctx)
	other := 3 - first - lead // the member neither restarted nor leading
	if lead < 0 || lead == first {
		other = (first + 1) % 3
	}
	procs[other].Kill()
	// The two left commit only what the restarted member holds too: raft
	// acknowledges an entry only on top of the whole log before it.
	more := startLoadOn(t, c, 4)
	more.waitFor(t, 100, "with the restarted member in the quorum")
	acked2, sent2 := more.stop()
	verifyOn(t, c, sum(acked, acked2), sum(sent, sent2))
	t.Logf("member %d killed and restarted, then member %d killed; %d consumes acknowledged before the first kill, %d after it",
		first, other, killedAt, l.total()+more.total()-killedAt)
}

// startMembers runs a governord process on each configuration file, in
// dir, and waits until each serves.
func startMembers(t *testing.T, dir string, files []string) []*testbin.Proc {
	t.Helper()
	procs := make([]*testbin.Proc, len(files))
	for i, f := range files {
		procs[i] = startProc(t, dir, nil, "-config", f)
	}
	for _, p := range procs {
		p.Serving()
	}
	return procs
}

// sum adds the counts of b to those of a.
func sum(a, b map[uint64]int64) map[uint64]int64 {
	out := make(map[uint64]int64, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}
