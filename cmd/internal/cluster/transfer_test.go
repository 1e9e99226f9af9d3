package cluster

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// transfers is how many planned transfers TestTransferRefusesNoCall runs.
const transfers = 10

// TestTransferRefusesNoCall hands the leadership over ten times while 16
// callers charge, each on the member it believes leads. A call that
// arrives during a transfer must be held and then answered *ErrNotLeader
// naming the new leader, which a client follows; a call already in the
// log must be answered with its result. No caller may see a refusal that
// names no leader (or the old one), nor an unknown outcome, and every
// charge acknowledged is in the last leader's state.
func TestTransferRefusesNoCall(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l := tc.leader()
	s, _ := tenant(t, l)
	nd, err := l.Create(&engine.Call{Session: s.ID}, engine.RootID, engine.Spec{Name: "x", Quotas: map[string]int64{"tokens": 1 << 40}})
	if err != nil {
		t.Fatal(err)
	}
	byAPI := make(map[string]*Node)
	for i, n := range tc.nodes {
		byAPI[tc.api[serverID(i)]] = n
	}
	var acked atomic.Int64
	var stop atomic.Bool
	var wrong firstError
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			at := l
			for !stop.Load() {
				err := at.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1)
				var nl *ErrNotLeader
				switch {
				case err == nil:
					acked.Add(1)
				case errors.As(err, &nl) && byAPI[nl.Leader] != nil && byAPI[nl.Leader] != at:
					at = byAPI[nl.Leader]
				default:
					wrong.set(err)
					return
				}
			}
		})
	}
	for i := range transfers {
		for before := acked.Load(); acked.Load() < before+64 && wrong.get() == nil; {
			tc.waitChange() // letting the callers run; no change is expected
		}
		if _, err := tc.leader().TransferLeadership(""); err != nil {
			t.Fatalf("transfer %d: %v", i, err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if err := wrong.get(); err != nil {
		t.Fatalf("a call during a planned transfer: %v, want its result or ErrNotLeader naming the new leader", err)
	}
	if got := used(t, tc.leader(), nd.ID); got != acked.Load() {
		t.Fatalf("%d charges acknowledged, %d tokens used on the last leader", acked.Load(), got)
	}
}
