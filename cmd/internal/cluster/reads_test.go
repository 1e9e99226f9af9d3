package cluster

import (
	"errors"
	"testing"
	"time"
)

// TestReadsShareLeaderChecks holds the first leadership check open while
// ten more reads arrive: they must all wait for one check that starts after
// the first, and take its answer.
func TestReadsShareLeaderChecks(t *testing.T) {
	var rd reads
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	errLost := errors.New("lost")
	calls := 0
	leader := func() error {
		calls++
		started <- struct{}{}
		if calls == 1 {
			<-release
			return nil
		}
		return errLost
	}
	first := make(chan error, 1)
	go func() { first <- rd.verify(leader) }()
	<-started
	later := make(chan error, 10)
	for range 10 {
		go func() { later <- rd.verify(leader) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for joined(&rd) < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d reads joined the next check", joined(&rd))
		}
		time.Sleep(time.Millisecond) // waiting for the goroutines to reach verify
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := <-later; !errors.Is(err, errLost) {
			t.Fatalf("a read that joined the second check got %v, want its answer", err)
		}
	}
	if calls != 2 {
		t.Fatalf("11 reads ran %d checks, want 2", calls)
	}
}

func joined(rd *reads) int {
	rd.vmu.Lock()
	defer rd.vmu.Unlock()
	if rd.next == nil {
		return 0
	}
	return rd.next.joined
}
