package cluster

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// answerBound is how long a call may take to return once its member has
// shut down: raft's shutdown plus scheduling on a loaded machine.
const answerBound = 10 * time.Second

// TestShutdownAnswersEveryCall stalls the leader's FSM while 32 charges
// are committed one after another, so raft holds them in its queue to the
// FSM, and shuts the leader down before letting the FSM go: raft drops
// what is still queued. Every call must return within answerBound, refused
// or of unknown outcome when not acknowledged, and the new leader must
// hold every acknowledged charge and no more than acknowledged plus
// unknown.
func TestShutdownAnswersEveryCall(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l, li := tc.leaderIndex()
	s, nd := tenant(t, l)
	gate := make(chan struct{})
	l.fsm.timeOf = func(c *Command, last int64) int64 { <-gate; return stampedTime(c, last) } // stalls the FSM, on purpose
	var acked, unknown atomic.Int64
	var wrong firstError
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			err := l.Consume(&engine.Call{Session: s.ID, Request: fmt.Sprint("c", i)}, nd.ID, "tokens", 1)
			var nl *ErrNotLeader
			switch {
			case err == nil:
				acked.Add(1)
			case errors.Is(err, ErrUnknownOutcome):
				unknown.Add(1)
			case !errors.As(err, &nl):
				wrong.set(err)
			}
		})
		time.Sleep(2 * time.Millisecond) // one charge per replication round, so raft queues many batches
	}
	go func() { _ = l.Shutdown() }()
	for l.raft.State() != raft.Shutdown {
		time.Sleep(time.Millisecond) // waiting for raft to begin its shutdown, not for a result
	}
	close(gate)
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(answerBound):
		t.Fatalf("calls on the shut-down leader did not return within %v", answerBound)
	}
	tc.nodes[li] = nil
	if err := wrong.get(); err != nil {
		t.Fatalf("a call on the shut-down leader: %v, want ErrNotLeader or ErrUnknownOutcome", err)
	}
	got := used(t, tc.leader(), nd.ID)
	if got < acked.Load() || got > acked.Load()+unknown.Load() {
		t.Fatalf("%d charges acknowledged and %d of unknown outcome, %d tokens used", acked.Load(), unknown.Load(), got)
	}
}
