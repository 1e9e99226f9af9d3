package cluster

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"governor.dev/governor/cmd/internal/engine"
)

// TestTransferRefusesNoCall hands the leadership over while 16 callers
// charge on the leader. A call that arrives during the transfer must be
// held and then answered *ErrNotLeader naming the new leader, which a
// client follows: no caller may see a refusal that names no leader (or the
// old one), and every charge acknowledged is in the new leader's state.
func TestTransferRefusesNoCall(t *testing.T) {
	tc := newCluster(t, 3, nil)
	l, li := tc.leaderIndex()
	s, _ := tenant(t, l)
	nd, err := l.Create(&engine.Call{Session: s.ID}, engine.RootID, engine.Spec{Name: "x", Quotas: map[string]int64{"tokens": 1 << 40}})
	if err != nil {
		t.Fatal(err)
	}
	byAPI := make(map[string]*Node)
	for i, n := range tc.nodes {
		byAPI[tc.api[serverID(i)]] = n
	}
	var acked, afterTransfer atomic.Int64
	var done atomic.Bool
	var wrong atomic.Value
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			at := l
			for !done.Load() || at == l {
				err := at.Consume(&engine.Call{Session: s.ID}, nd.ID, "tokens", 1)
				var nl *ErrNotLeader
				switch {
				case err == nil:
					acked.Add(1)
					if done.Load() {
						afterTransfer.Add(1)
					}
				case errors.As(err, &nl) && byAPI[nl.Leader] != nil && byAPI[nl.Leader] != at:
					at = byAPI[nl.Leader]
				default:
					wrong.Store(err)
					return
				}
			}
		})
	}
	for acked.Load() < 64 {
		tc.waitChange() // letting the callers run; no change is expected
	}
	if err := l.TransferLeadership(""); err != nil {
		t.Fatal(err)
	}
	done.Store(true)
	wg.Wait()
	if err, _ := wrong.Load().(error); err != nil {
		t.Fatalf("a call during a planned transfer: %v, want its result or ErrNotLeader naming the new leader", err)
	}
	nl, ni := tc.leaderIndex()
	if ni == li {
		t.Fatal("the leadership did not move")
	}
	if got := used(t, nl, nd.ID); got != acked.Load() {
		t.Fatalf("%d charges acknowledged, %d tokens used on the new leader", acked.Load(), got)
	}
}
