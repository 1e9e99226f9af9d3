package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data directory holding raft.db, the log of a member from before the
// log moved to raft-wal, is refused with a sentence saying what to do, and
// left as it was: a member starting there with an empty log could vote
// twice in a term and accept entries it should not.
func TestOpenRefusesADataDirWithAnEarlierLog(t *testing.T) {
	dir := t.TempDir()
	old := []byte("a log written by an earlier member")
	if err := os.WriteFile(filepath.Join(dir, boltLog), old, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := Open(soloOnDisk(dir))
	if err == nil {
		_ = n.Shutdown()
		t.Fatal("Open started a member over a data directory with an earlier log")
	}
	for _, want := range []string{dir, "raft.db", "earlier governord", "add it back as a new member"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != boltLog {
		t.Errorf("the refused data directory holds %v, want only %s", entries, boltLog)
	}
	if got, err := os.ReadFile(filepath.Join(dir, boltLog)); err != nil || string(got) != string(old) {
		t.Errorf("the earlier log reads %q (%v) after the refusal, want it unchanged", got, err)
	}
}
