package bench

import (
	"context"
	"regexp"
	"testing"
	"time"

	"governor.dev/governor/cmd/internal/pgtest"
	"governor.dev/governor/internal/clientconn"
)

// TestScenarios runs every scenario at Reduced() sizes against governord
// in this process (and as a process of its own for the restart) and checks
// the counts that must hold whatever the timings.
func TestScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs governord and the whole benchmark, reduced")
	}
	opts := Options{Dir: t.TempDir(), Sizes: Reduced(), PostgresURL: pgtest.DSN(t), Progress: t.Logf}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	reports, err := Run(ctx, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	sz := opts.Sizes
	for _, r := range reports {
		t.Run(r.Scenario, func(t *testing.T) {
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			switch res := r.Result.(type) {
			case *FanoutResult:
				checkFanout(t, sz, res)
			case *NoisyResult:
				checkNoisy(t, sz, res)
			case *RetryResult:
				checkRetry(t, sz, res)
			case *CapacityResult:
				checkCapacity(t, sz, res)
			case *CrashResult:
				checkCrash(t, sz, res)
			case *FloodedResult:
				checkFlooded(t, res)
			case *RestartResult:
				checkRestart(t, sz, res)
			case *FailoverResult:
				checkFailover(t, sz, res)
			case *OverheadResult:
				checkOverhead(t, res)
			default:
				t.Fatalf("a result of type %T has no check", res)
			}
		})
	}
	if len(reports) != len(Scenarios()) {
		t.Fatalf("%d reports for %d scenarios", len(reports), len(Scenarios()))
	}
}

func checkFanout(t *testing.T, sz Sizes, r *FanoutResult) {
	wanted := int64(treeSize(sz.FanWidth, sz.FanDepth) * sz.FanRequests)
	if r.Without.Sent() != wanted {
		t.Errorf("without governor %d requests sent, want all %d", r.Without.Sent(), wanted)
	}
	if r.With.Sent() != sz.FanBudget || r.Refused != wanted-sz.FanBudget {
		t.Errorf("with governor %d sent and %d refused; want the budget, %d, and the rest, %d", r.With.Sent(), r.Refused, sz.FanBudget, wanted-sz.FanBudget)
	}
	if r.With.Shed != 0 || r.With.Peak > sz.FanCapacity {
		t.Errorf("with governor %d shed at a peak of %d; the pool is the capacity, %d, so none may be shed", r.With.Shed, r.With.Peak, sz.FanCapacity)
	}
}

func checkNoisy(t *testing.T, sz Sizes, r *NoisyResult) {
	if fair := sz.NoisyB + sz.NoisySlots; r.Fair.AGrantsBeforeB > fair {
		t.Errorf("B waited out %d of A's grants; its fair share allows %d", r.Fair.AGrantsBeforeB, fair)
	}
	if r.FIFO.AGrantsBeforeB < sz.NoisyA/2 {
		t.Errorf("behind the FIFO semaphore B waited out only %d of A's %d grants", r.FIFO.AGrantsBeforeB, sz.NoisyA)
	}
}

func checkRetry(t *testing.T, sz Sizes, r *RetryResult) {
	storm := int64(sz.RetryOps)
	for range sz.RetryLayers {
		storm *= int64(sz.RetryAttempts)
	}
	if r.Without != storm {
		t.Errorf("without governor %d requests, want %d", r.Without, storm)
	}
	if want := int64(sz.RetryOps) + sz.RetryBudget; r.With != want {
		t.Errorf("with governor %d requests, want one first attempt per operation and one per unit of budget, %d", r.With, want)
	}
}

func checkCapacity(t *testing.T, sz Sizes, r *CapacityResult) {
	if r.LimitAtEnd >= sz.DropFrom {
		t.Errorf("the adaptive limit ended at %d, not below the capacity before the drop, %d", r.LimitAtEnd, sz.DropFrom)
	}
	// Shed per request served, cross-multiplied: the two runs served about
	// as many requests, but in times that the machine's load decides.
	if r.Adaptive.Shed*r.Fixed.Served >= r.Fixed.Shed*r.Adaptive.Served {
		t.Errorf("after the drop the adaptive limit shed %d for %d served, the fixed one %d for %d", r.Adaptive.Shed, r.Adaptive.Served, r.Fixed.Shed, r.Fixed.Served)
	}
}

func checkCrash(t *testing.T, sz Sizes, r *CrashResult) {
	if r.Refused != sz.CrashSlots || r.LateReleases != sz.CrashSlots {
		t.Errorf("%d of %d late releases refused, want all %d", r.Refused, r.LateReleases, sz.CrashSlots)
	}
	if r.SurvivorLease <= r.DeadMaxLease {
		t.Errorf("the survivor's lease %d is not larger than the dead worker's %d", r.SurvivorLease, r.DeadMaxLease)
	}
	// The slots are the dead worker's until its TTL has run from its last
	// heartbeat; the heartbeat's own trip is the only slack.
	if r.HandedOnAfter < sz.CrashTTL-100*time.Millisecond {
		t.Errorf("the pool was handed on %s after the last heartbeat, before the TTL of %s", r.HandedOnAfter, sz.CrashTTL)
	}
}

func checkFlooded(t *testing.T, r *FloodedResult) {
	if r.Fair != [3]int{3, 3, 3} {
		t.Errorf("governor's first 9 grants went %v, want 3/3/3", r.Fair)
	}
	if r.FIFO != [3]int{9, 0, 0} {
		t.Errorf("the FIFO semaphore's first 9 grants went %v, want all to the flooder", r.FIFO)
	}
}

func checkRestart(t *testing.T, sz Sizes, r *RestartResult) {
	for _, run := range r.Runs {
		if run.Skipped != "" {
			t.Logf("%s skipped: %s", run.Record, run.Skipped)
			continue
		}
		if run.Acknowledged != int64(sz.RestartCharges) || run.OnRecord != run.Acknowledged {
			t.Errorf("%s: %d charges acknowledged, %d on record; want %d of each", run.Record, run.Acknowledged, run.OnRecord, sz.RestartCharges)
		}
		if !run.SessionValid || !run.LeaseValid {
			t.Errorf("%s: after the restart session valid %v, lease valid %v", run.Record, run.SessionValid, run.LeaseValid)
		}
		if run.Downtime <= 0 {
			t.Errorf("%s: downtime %s", run.Record, run.Downtime)
		}
	}
}

func checkOverhead(t *testing.T, r *OverheadResult) {
	for _, rec := range r.Records {
		if rec.Skipped != "" {
			t.Logf("%s skipped: %s", rec.Record, rec.Skipped)
			continue
		}
		if rec.Consume <= 0 || rec.AcquireRel <= 0 || rec.Throughput <= 0 {
			t.Errorf("%s: %+v", rec.Record, rec)
		}
	}
}

// TestAgainstAddr runs scenarios against a governord given by address, as
// -addr does: those that need one of their own are skipped, not failed.
func TestAgainstAddr(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	remote, err := startInProcess(ctx, settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer remote.close()
	conn := clientconn.Config{Addr: remote.conn.Addr}
	opts := Options{Remote: &conn, AdminKey: remote.adminKey, MetricsURL: remote.metricsURL, Dir: t.TempDir(), Sizes: Reduced()}
	reports, err := Run(ctx, opts, regexp.MustCompile("^(flooded|capacity)$"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 {
		t.Fatalf("%d reports, want flooded and capacity", len(reports))
	}
	if r := reports[0]; r.Scenario != "capacity" || r.Skipped == "" || r.Error != "" {
		t.Errorf("capacity against an address: %+v, want skipped", r)
	}
	if r := reports[1]; r.Error != "" {
		t.Errorf("flooded against an address: %s", r.Error)
	} else {
		checkFlooded(t, r.Result.(*FloodedResult))
	}
}

func checkFailover(t *testing.T, sz Sizes, r *FailoverResult) {
	if r.Acknowledged != int64(sz.FailoverCharges) || r.OnRecord != r.Acknowledged {
		t.Errorf("%d charges acknowledged, %d on the survivors' record; want %d of each", r.Acknowledged, r.OnRecord, sz.FailoverCharges)
	}
	if !r.SessionValid || !r.LeaseValid {
		t.Errorf("after the failover session valid %v, lease valid %v", r.SessionValid, r.LeaseValid)
	}
	if r.Gap <= 0 {
		t.Errorf("admission gap %s: no charge sent after the kill was acknowledged", r.Gap)
	}
}
