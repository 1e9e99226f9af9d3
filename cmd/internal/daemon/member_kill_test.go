package daemon

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"governor.dev/governor"
)

// killLongEnv names the environment variable that, set to 1, makes
// TestLeaderKilledRepeatedlyLosesNothing kill the leader killsLong times
// instead of killsDefault.
const killLongEnv = "GOVERNOR_KILL_LONG"

const (
	killsDefault = 3
	killsLong    = 20
	killClients  = 4 // SDK clients, each with a task and its pool
	killCallers  = 16
	killPool     = 2 // leases each task's pool holds at most
)

// Three governord processes serve 16 callers through 4 SDK clients; each
// client has a task whose pool holds 2 leases, and its callers consume on
// the task and acquire (waiting in the queue), validate and release leases
// of the pool. The leader is killed with SIGKILL again and again, each
// time once the callers made progress, and restarted once they made
// progress without it. At the end nothing acknowledged is lost:
//   - every task's usage lies between its acknowledged charges and those
//     plus the ones with unknown outcomes; once each unknown consume is
//     repeated with its request id, the usage is exactly the sum of all;
//   - no lease id was granted twice, no pool held more than 2 leases at
//     any moment (from the grants' answers to their releases), a lease
//     still held validates, a released one does not, and each pool's
//     holdings on governord are within its limit and cover those held.
func TestLeaderKilledRepeatedlyLosesNothing(t *testing.T) {
	kills := killsDefault
	if os.Getenv(killLongEnv) == "1" {
		kills = killsLong
	}
	pc := startProcCluster(t, "")
	l := runKillLoad(t, pc, kills)
	checkCharges(t, l)
	checkGrants(t, l)
}

// killLoad is the callers of a run and what they were told.
type killLoad struct {
	ledger *ledger
	ctxs   []context.Context // each client's task
	tasks  []*governor.Task
	client *governor.Client // reads the tasks at the end
}

// runKillLoad starts the clients and callers, kills and restarts the
// leader kills times, stops the callers and returns what they were told.
func runKillLoad(t *testing.T, pc *procCluster, kills int) *killLoad {
	kl := &killLoad{ledger: &ledger{t: t}}
	for i := range killClients {
		c := pc.dial(t)
		ctx, task := newTask(t, c, governor.Spec{Name: fmt.Sprintf("kill-%d", i),
			Quotas: map[string]int64{"http": 10_000_000}, Limits: map[string]int64{"slot": killPool}})
		kl.ctxs, kl.tasks, kl.client = append(kl.ctxs, ctx), append(kl.tasks, task), c
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	defer func() { stop.Store(true); wg.Wait() }() // on a failure too: no caller outlives the test
	for i := range killCallers {
		c := &caller{name: fmt.Sprintf("c%d", i), task: i % killClients, ctx: kl.ctxs[i%killClients],
			rng: rand.New(rand.NewPCG(uint64(i), 7)), ledger: kl.ledger, stop: &stop, keeps: i < killClients}
		wg.Go(c.loop)
	}
	ctx := t.Context()
	for k := range kills {
		kl.ledger.waitProgress(50, 5, fmt.Sprintf("before kill %d", k+1))
		lead := pc.leader(ctx)
		if lead < 0 {
			t.Fatalf("kill %d: no member answers as the leader", k+1)
		}
		start := time.Now()
		pc.kill(lead)
		kl.ledger.waitProgress(50, 5, fmt.Sprintf("after kill %d, of member %d", k+1, lead))
		resumed := time.Since(start)
		if err := pc.start(lead); err != nil {
			t.Fatal(err)
		}
		t.Logf("kill %d, of member %d: progress again after %v, restarted after %v", k+1, lead, resumed.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	kl.ledger.waitProgress(50, 5, "after the last restart")
	stop.Store(true)
	wg.Wait()
	acked, granted := kl.ledger.progress()
	t.Logf("%d kills of the leader: %d consumes acknowledged, %d leases granted, %d acquires with unknown outcomes",
		kills, acked, granted, unknownAcquires(kl.ledger))
	return kl
}

// checkCharges checks each task's usage against the charges sent on it,
// then repeats the unknown ones with their request ids and checks the
// usage is the sum of every charge.
func checkCharges(t *testing.T, kl *killLoad) {
	t.Helper()
	acked := make([]int64, len(kl.tasks))
	unknown := make([]int64, len(kl.tasks))
	for _, c := range kl.ledger.charges {
		if c.acked {
			acked[c.task] += c.n
		} else {
			unknown[c.task] += c.n
		}
	}
	for i := range kl.tasks {
		if used := kl.used(t, i); used < acked[i] || used > acked[i]+unknown[i] {
			t.Errorf("task %d: %d used on record; %d acknowledged and %d with unknown outcomes", i, used, acked[i], unknown[i])
		}
	}
	resolved := 0
	for _, c := range kl.ledger.charges {
		if c.acked {
			continue
		}
		ctx, cancel := context.WithTimeout(governor.WithRequestID(kl.ctxs[c.task], c.id), time.Minute)
		if _, err := governor.Consume(ctx, "http", c.n); err != nil {
			t.Errorf("consume %s, repeated with its request id: %v", c.id, err)
		}
		cancel()
		resolved++
	}
	for i := range kl.tasks {
		if used := kl.used(t, i); used != acked[i]+unknown[i] {
			t.Errorf("task %d: %d used once %d unknown consumes were repeated; want the %d acknowledged plus the %d repeated",
				i, used, resolved, acked[i], unknown[i])
		}
	}
	t.Logf("%d consumes with unknown outcomes repeated with their request ids", resolved)
}

// checkGrants checks the leases the callers were granted against each
// other and against governord.
func checkGrants(t *testing.T, kl *killLoad) {
	t.Helper()
	ids := make(map[uint64]bool)
	held := make([]int64, len(kl.tasks))
	unsure := make([]int64, len(kl.tasks)) // releases sent but not answered
	for _, g := range kl.ledger.grants {
		if ids[g.lease.ID] {
			t.Errorf("lease %d was granted twice", g.lease.ID)
		}
		ids[g.lease.ID] = true
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		err := g.lease.Validate(ctx)
		cancel()
		switch {
		case g.until.IsZero():
			held[g.pool]++
			if err != nil {
				t.Errorf("lease %d, still held, does not validate: %v", g.lease.ID, err)
			}
		case g.released && !errors.Is(err, governor.ErrLeaseLost):
			t.Errorf("lease %d, released, validates as %v; want ErrLeaseLost", g.lease.ID, err)
		case !g.released:
			unsure[g.pool]++
		}
	}
	for i := range kl.tasks {
		if most := mostHeld(kl.ledger.grants, i); most > killPool {
			t.Errorf("pool %d: %d leases were held at one moment; its limit is %d", i, most, killPool)
		}
		// Beyond the leases the callers kept, governord may hold only those
		// whose release went unanswered and those granted to an acquire
		// whose answer was lost: a waiter a retried acquire did not
		// re-attach to would hold a slot nobody knows of.
		most := held[i] + unsure[i] + int64(kl.ledger.unknowns[i])
		n := kl.describe(t, i).Classes["slot"]
		if n.Held > killPool || n.Held < held[i] || n.Held > most {
			t.Errorf("pool %d: governord says %d leases are held; the callers kept %d, %d releases and %d acquires went unanswered, and the limit is %d",
				i, n.Held, held[i], unsure[i], kl.ledger.unknowns[i], killPool)
		}
	}
}

// unknownAcquires counts the acquires of every pool whose outcome is
// unknown.
func unknownAcquires(l *ledger) int {
	n := 0
	for _, u := range l.unknowns {
		n += u
	}
	return n
}

// describe reads task i through the client.
func (kl *killLoad) describe(t *testing.T, i int) governor.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	n, err := kl.client.Describe(ctx, kl.tasks[i].ID())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// used is task i's usage of http.
func (kl *killLoad) used(t *testing.T, i int) int64 {
	t.Helper()
	return kl.describe(t, i).Resources["http"].Used
}
