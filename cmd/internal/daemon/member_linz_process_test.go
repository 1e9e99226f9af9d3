package daemon

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"governor.dev/governor"
	"governor.dev/governor/cmd/internal/linz"
)

// The quota and pool of the process histories: the cap of each key, low
// enough that a history reaches it, so denials are checked too, and the
// size of the pool.
const (
	procLinzCap  = 150
	procLinzPool = 3
	procLinzKeys = 2
)

// procLinzLongEnv names the environment variable that, set to 1, makes
// TestLinearizableAcrossKilledAndPausedProcesses check
// procLinzLongHistories histories of procLinzLongRun instead of
// procLinzHistories of procLinzRun. It is the one the in-process
// linearizability tests read.
const procLinzLongEnv = "GOVERNOR_LINZ_LONG"

const (
	procLinzHistories     = 2
	procLinzRun           = 5 * time.Second
	procLinzLongHistories = 50
	procLinzLongRun       = 8 * time.Second
	procLinzCheckTime     = 2 * time.Minute
)

// Three governord processes, and SDK clients calling them while a
// schedule kills members with SIGKILL and pauses them with SIGSTOP, the
// leader or a follower, at random times, restarting or resuming each
// before the next fault. Each history, settled by linz.Resolve (unknown
// consumes repeated with their request ids, then a final read of every
// key), is linearizable under Idempotent, and its lease calls under
// LeasePool.
func TestLinearizableAcrossKilledAndPausedProcesses(t *testing.T) {
	histories, d := procLinzHistories, procLinzRun
	if os.Getenv(procLinzLongEnv) == "1" {
		histories, d = procLinzLongHistories, procLinzLongRun
	}
	pc := startProcCluster(t, "bounds: {queued_acquires: 1}\n")
	fillQueue(t, pc)
	for i := range histories {
		seed := uint64(i + 1)
		target := newSDKTarget(t, pc, fmt.Sprintf("linz-%d", i), procLinzKeys, procLinzCap, procLinzPool)
		r := linz.Run{
			Target: target, Clients: 6, Readers: 1, Pause: 2 * time.Millisecond, Duration: d,
			Keys: procLinzKeys, Seed: seed, Retries: 5, Timeout: 10 * time.Second,
			Faults: pc.faults(t, rand.New(rand.NewPCG(seed, 16)), seed, d),
		}
		h, err := r.Go(t.Context())
		if err == nil {
			err = pc.heal()
		}
		if err != nil {
			t.Fatal(err)
		}
		quota, err := linz.Resolve(t.Context(), target, h.Quota, procLinzKeys, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		logHistory(t, i+1, quota, h.Leases)
		if !linz.Check(t, linz.Idempotent(procLinzCap), quota, procLinzCheckTime) ||
			!linz.Check(t, linz.LeasePool(procLinzPool), h.Leases, procLinzCheckTime) {
			t.Fatalf("history %d of %d is not linearizable", i+1, histories)
		}
		_ = target.c.Close() // its session lapses if the close is lost; the next history dials anew
	}
}

// logHistory says how long history i is and how many of its calls have
// unknown outcomes; it fails the test when a part is empty.
func logHistory(t *testing.T, i int, quota, leases []porcupine.Operation) {
	t.Helper()
	if len(quota) == 0 || len(leases) == 0 {
		t.Fatalf("history %d: %d quota and %d lease calls", i, len(quota), len(leases))
	}
	unknown, denied := 0, 0
	for _, op := range quota {
		if op.Input.(linz.QuotaOp).Kind == linz.Consume && op.Output == any(linz.QuotaResult{}) {
			denied++
		}
	}
	for _, op := range append(quota, leases...) {
		if op.Output == linz.Unknown {
			unknown++
		}
	}
	t.Logf("history %d: %d quota calls, %d lease calls; %d denied consumes, %d calls with unknown outcomes", i, len(quota), len(leases), denied, unknown)
}

// faults is a schedule of about d: a member killed or paused, the leader
// or a follower, then restarted or resumed, and again. The kinds take
// turns, from one the seed picks, so that a few histories make each; the
// times and the follower are random.
func (pc *procCluster) faults(t *testing.T, rng *rand.Rand, seed uint64, d time.Duration) []linz.Fault {
	var out []linz.Fault
	for i, total := seed, time.Duration(0); total < d; i++ {
		at, back := jitter(rng, 300*time.Millisecond, 600*time.Millisecond), jitter(rng, 500*time.Millisecond, time.Second)
		out = append(out, pc.fault(t, at, i%2 == 0, i/2%2 == 0, 1+rng.IntN(2)), linz.Fault{After: back, Name: "heal", Do: pc.heal})
		total += at + back
	}
	return out
}

// jitter is base plus up to spread more.
func jitter(rng *rand.Rand, base, spread time.Duration) time.Duration {
	return base + time.Duration(rng.Int64N(int64(spread)))
}

// fault kills or pauses the leader, or else the member other places after
// it, once after.
func (pc *procCluster) fault(t *testing.T, after time.Duration, leader, kill bool, other int) linz.Fault {
	name := map[bool]string{true: "kill", false: "pause"}[kill] + map[bool]string{true: " the leader", false: " a follower"}[leader]
	return linz.Fault{After: after, Name: name, Do: func() error {
		i := pc.leader(context.Background())
		if i < 0 {
			return fmt.Errorf("no member leads")
		}
		if !leader {
			i = (i + other) % 3
		}
		t.Logf("%s: member %d", name, i)
		if kill {
			pc.kill(i)
			return nil
		}
		return pc.pause(i)
	}}
}

// fillQueue takes the one place the tenant has in the acquire queue
// (bounds.queued_acquires: 1) with an acquire that waits behind a lease of
// another class, which nobody releases, and takes it again whenever it is
// freed, until the test ends. An acquire of the histories that does not
// fit is then refused at once with the bound, a denial: a NoWait acquire
// otherwise queues a waiter and withdraws it, and a release between the
// two grants the waiter a lease that its withdrawal gives back, a hold no
// client saw, which LeasePool cannot express.
func fillQueue(t *testing.T, pc *procCluster) {
	t.Helper()
	c := pc.dial(t)
	ctx, gate := newTask(t, c, governor.Spec{Name: "gate", Limits: map[string]int64{"gate": 1}})
	held, err := governor.Acquire(ctx, "gate")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if _, err := governor.Acquire(ctx, "gate"); err == nil {
				t.Errorf("a second lease of gate, whose limit is 1, was granted while lease %d is held", held.ID)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { <-done })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		n, err := c.Describe(ctx, gate.ID())
		if err == nil && n.Classes["gate"].Waiting == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the acquire that fills the queue does not wait after a minute: %+v, %v", n.Classes, err)
		}
	}
}
