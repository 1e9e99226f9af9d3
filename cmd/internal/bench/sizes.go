package bench

import (
	"errors"
	"fmt"
	"time"
)

// Sizes are the parameters of the workloads. Full() is the benchmark as
// published; Reduced() is small enough for a test.
type Sizes struct {
	// Runaway fan-out: each task spawns FanWidth subtasks down to FanDepth
	// levels below the first and makes FanRequests requests; the service
	// takes FanCapacity at once; the run's budget is FanBudget.
	FanWidth, FanDepth, FanRequests int
	FanCapacity, FanBudget          int64
	// Noisy neighbour: A queues NoisyA jobs on a pool of NoisySlots, then B
	// queues NoisyB; each holds a slot NoisyHold.
	NoisyA, NoisyB, NoisySlots int
	NoisyHold                  time.Duration
	// Retry storm: RetryOps operations, each RetryLayers nested loops of
	// RetryAttempts attempts, against a down service; a budget of
	// RetryBudget retries.
	RetryOps, RetryLayers, RetryAttempts int
	RetryBudget                          int64
	// Capacity drop: DropWorkers workers; the service's capacity falls
	// from DropFrom to DropTo after the first of three thirds, each of
	// which lasts DropFor/3 and until the service has served DropServed
	// requests in it.
	DropWorkers                  int
	DropFor                      time.Duration
	DropFrom, DropTo, DropServed int64
	// Worker crash: a worker holds all CrashSlots slots on a session of
	// CrashTTL and dies.
	CrashSlots int
	CrashTTL   time.Duration
	// Flooded tenants: FloodBig waiters of one tenant and FloodSmall of two
	// others on a pool of FloodPool.
	FloodBig, FloodSmall, FloodPool int
	// governord restart: RestartWorkers workers charge RestartCharges units
	// in all, one at a time.
	RestartWorkers, RestartCharges int
	// Cluster failover: FailoverWorkers workers charge FailoverCharges
	// units in all, one at a time, through a cluster of three.
	FailoverWorkers, FailoverCharges int
	// Overhead: OverheadCalls calls one after another, then
	// OverheadCallers callers for OverheadFor.
	OverheadCalls, OverheadCallers int
	OverheadFor                    time.Duration
}

// Full returns the parameters of the published benchmark.
func Full() Sizes {
	return Sizes{
		FanWidth: 3, FanDepth: 4, FanRequests: 3, FanCapacity: 10, FanBudget: 150,
		NoisyA: 400, NoisyB: 10, NoisySlots: 4, NoisyHold: 5 * time.Millisecond,
		RetryOps: 20, RetryLayers: 3, RetryAttempts: 3, RetryBudget: 20,
		DropWorkers: 40, DropFor: 6 * time.Second, DropFrom: 20, DropTo: 5, DropServed: 200,
		CrashSlots: 4, CrashTTL: time.Second,
		FloodBig: 5000, FloodSmall: 3, FloodPool: 9,
		RestartWorkers: 4, RestartCharges: 3000,
		FailoverWorkers: 16, FailoverCharges: 3000,
		OverheadCalls: 2000, OverheadCallers: 16, OverheadFor: 2 * time.Second,
	}
}

// Reduced returns the same workloads, smaller, for a test.
func Reduced() Sizes {
	return Sizes{
		FanWidth: 3, FanDepth: 3, FanRequests: 3, FanCapacity: 10, FanBudget: 50,
		NoisyA: 80, NoisyB: 6, NoisySlots: 4, NoisyHold: 5 * time.Millisecond,
		RetryOps: 6, RetryLayers: 3, RetryAttempts: 3, RetryBudget: 6,
		DropWorkers: 12, DropFor: 1500 * time.Millisecond, DropFrom: 8, DropTo: 2, DropServed: 30,
		CrashSlots: 4, CrashTTL: time.Second,
		FloodBig: 300, FloodSmall: 3, FloodPool: 9,
		RestartWorkers: 4, RestartCharges: 300,
		FailoverWorkers: 4, FailoverCharges: 300,
		OverheadCalls: 50, OverheadCallers: 4, OverheadFor: 200 * time.Millisecond,
	}
}

func (s Sizes) check() error {
	var errs []error
	atLeast := func(name string, v, lo int64) {
		if v < lo {
			errs = append(errs, fmt.Errorf("%w: %s must be at least %d, got %d", ErrOptions, name, lo, v))
		}
	}
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"FanWidth", int64(s.FanWidth)}, {"FanDepth", int64(s.FanDepth)}, {"FanRequests", int64(s.FanRequests)},
		{"FanCapacity", s.FanCapacity}, {"NoisyA", int64(s.NoisyA)}, {"NoisyB", int64(s.NoisyB)},
		{"NoisySlots", int64(s.NoisySlots)}, {"RetryOps", int64(s.RetryOps)}, {"RetryLayers", int64(s.RetryLayers)},
		{"RetryAttempts", int64(s.RetryAttempts)}, {"DropWorkers", int64(s.DropWorkers)}, {"DropFrom", s.DropFrom},
		{"DropTo", s.DropTo}, {"DropServed", s.DropServed}, {"CrashSlots", int64(s.CrashSlots)}, {"FloodBig", int64(s.FloodBig)},
		{"FloodSmall", int64(s.FloodSmall)}, {"FloodPool", int64(s.FloodPool)}, {"RestartWorkers", int64(s.RestartWorkers)},
		{"FailoverWorkers", int64(s.FailoverWorkers)},
		{"OverheadCalls", int64(s.OverheadCalls)}, {"OverheadCallers", int64(s.OverheadCallers)},
	} {
		atLeast(c.name, c.v, 1)
	}
	atLeast("FanBudget", s.FanBudget, 0)
	atLeast("RetryBudget", s.RetryBudget, 0)
	atLeast("RestartCharges", int64(s.RestartCharges), int64(3*s.RestartWorkers))
	atLeast("FailoverCharges", int64(s.FailoverCharges), int64(3*s.FailoverWorkers))
	if s.CrashTTL < time.Second {
		errs = append(errs, fmt.Errorf("%w: CrashTTL must be at least 1s, governord's shortest session, got %s", ErrOptions, s.CrashTTL))
	}
	for name, d := range map[string]time.Duration{"NoisyHold": s.NoisyHold, "DropFor": s.DropFor, "OverheadFor": s.OverheadFor} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%w: %s must be a positive duration, got %s", ErrOptions, name, d))
		}
	}
	return errors.Join(errs...)
}
