package adaptive

import (
	"testing"
	"testing/synctest"
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// TestLoopDecidesEachClassOnItsInterval runs the goroutine on a fake clock:
// each class decides once per its own interval, Start twice starts one
// goroutine, and Stop waits for it.
func TestLoopDecidesEachClassOnItsInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fast := Class{Name: "fast", Initial: 10, Min: 1, Max: 100, Interval: time.Second, MinSamples: 1}
		slow := Class{Name: "slow", Initial: 10, Min: 1, Max: 100, Interval: 5 * time.Second, MinSamples: 1}
		r := openRig(t, "", fast, slow)
		r.ctl.Start()
		r.ctl.Start()
		synctest.Wait() // the initial limits reach Observe before the first reports
		lease := engine.ID(1000)
		healthy := func() {
			lease++
			r.ctl.Observe([]*engine.Event{
				{Kind: engine.KindLeaseReleased, Target: lease, Session: 9, Name: "fast"},
				{Kind: engine.KindLeaseReleased, Target: lease, Session: 9, Name: "slow"},
			})
		}
		for range 10 {
			healthy()
			time.Sleep(time.Second)
			synctest.Wait()
		}
		if got, _ := r.limit("fast"); got != 20 {
			t.Errorf("fast after 10 intervals of 1s = %d, want 20", got)
		}
		if got, _ := r.limit("slow"); got != 12 {
			t.Errorf("slow after 10s at 5s intervals = %d, want 12", got)
		}
		r.ctl.Stop()
		r.ctl.Stop()
		healthy()
		time.Sleep(time.Minute)
		synctest.Wait()
		if got, _ := r.limit("fast"); got != 20 {
			t.Errorf("fast moved to %d after Stop", got)
		}
		r.ctl.Start()
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		if got, _ := r.limit("fast"); got != 21 {
			t.Errorf("fast after a restart and one interval = %d, want 21", got)
		}
		r.close()
	})
}
