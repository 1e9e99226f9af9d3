package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestSecondMemberOnADataDirIsRefused opens a member on a data directory
// and a second one on the same directory: the second is refused at once
// with a sentence naming the directory (without the lock it would wait
// forever for raft-wal's), and the directory opens again once the first
// has shut down.
func TestSecondMemberOnADataDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := soloOnDisk(dir)
	first := openSolo(t, cfg)
	second := cfg
	_, second.Transport = raft.NewInmemTransport("")
	refused := make(chan error, 1)
	go func() {
		n, err := Open(second)
		if err == nil {
			_ = n.Shutdown()
		}
		refused <- err
	}()
	select {
	case err := <-refused:
		if err == nil {
			t.Fatal("a second member opened a data directory a running member holds")
		}
		for _, want := range []string{dir, "held by another member"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not say %q", err, want)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a second member on a held data directory still waits after 5 s; it must be refused at once")
	}
	if err := first.Shutdown(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(cfg)
	if err != nil {
		t.Fatalf("reopening the data directory after its member shut down: %v", err)
	}
	if err := again.Shutdown(); err != nil {
		t.Fatal(err)
	}
}
