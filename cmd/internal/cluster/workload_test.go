package cluster

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// workload makes a random but reproducible stream of commands that touches
// the tree, quotas, rates, leases, queues, sessions and their lapse, keeping
// the ids the engine answered so later commands name live things.
type workload struct {
	rng      *rand.Rand
	now      int64
	nodes    []engine.ID
	sessions []engine.ID
	leases   []engine.LeaseInfo
	queued   []uint64
}

func newWorkload(seed uint64) *workload {
	return &workload{rng: rand.New(rand.NewPCG(seed, 1)), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), nodes: []engine.ID{engine.RootID}}
}

func (w *workload) pick(ids []engine.ID) engine.ID {
	if len(ids) == 0 {
		return 0
	}
	return ids[w.rng.IntN(len(ids))]
}

// next returns the next command, stamped with a time that mostly goes on
// and sometimes steps back, as a new leader's clock may.
func (w *workload) next(i int) *Command {
	w.now += int64(w.rng.IntN(int(300 * time.Millisecond)))
	c := &Command{Now: w.now - int64(w.rng.IntN(3))*int64(time.Second), Session: w.pick(w.sessions), Target: w.pick(w.nodes)}
	if w.rng.IntN(4) == 0 {
		c.Request = "r" + strconv.Itoa(w.rng.IntN(i+1))
	}
	switch w.rng.IntN(24) {
	case 0, 1:
		c.Op = OpCreate
		c.Spec = &engine.Spec{Name: "n" + strconv.Itoa(i), Quotas: map[string]int64{"tokens": int64(w.rng.IntN(50))},
			Limits: map[string]int64{"gpu": int64(1 + w.rng.IntN(2))}, Detached: w.rng.IntN(2) == 0}
		if w.rng.IntN(3) == 0 {
			c.Spec.Deadline = w.now + int64(w.rng.IntN(int(20*time.Second)))
		}
	case 2:
		c.Op, c.Session, c.Target, c.Span = OpOpenSession, 0, engine.RootID, time.Duration(2+w.rng.IntN(20))*time.Second
		for j := range c.Token {
			c.Token[j] = byte(w.rng.Uint32())
		}
	case 3, 4:
		c.Op, c.Name, c.Amount = OpConsume, "tokens", int64(1+w.rng.IntN(4))
	case 5:
		c.Op, c.Name, c.Amount, c.Options = OpConsumeWith, "calls", 1, engine.ConsumeOptions{MaxWait: time.Second}
	case 6:
		c.Op, c.Name, c.Rate = OpSetRate, "calls", &engine.Rate{Limit: 3, Period: time.Second}
	case 7, 8:
		c.Op, c.Name, c.Span = OpAcquire, "gpu", time.Duration(w.rng.IntN(5))*time.Second
	case 9:
		c.Op = OpRelease
		if len(w.leases) > 0 {
			l := w.leases[w.rng.IntN(len(w.leases))]
			c.Target, c.Session = l.ID, l.Session
		}
	case 10, 14:
		c.Op, c.Renew = OpHeartbeat, slices.Clone(w.sessions)
	case 11:
		c.Op = OpReap
	case 12:
		if len(w.queued) > 0 {
			c.Op, c.Waiter = OpAbandon, w.queued[w.rng.IntN(len(w.queued))]
		} else {
			c.Op = OpCancel
		}
	case 15:
		c.Op, c.Charge = OpEnsure, &engine.Charge{Resource: "tokens", Amount: 1}
		c.Spec = &engine.Spec{Name: "e" + strconv.Itoa(w.rng.IntN(20)), Quotas: map[string]int64{"tokens": 5}}
	case 16:
		c.Op, c.Amount = OpConsumeKeyed, 1
		c.Keyed = &engine.KeyedLimit{Parent: c.Target, Group: "ip", Key: strconv.Itoa(w.rng.IntN(8)), Resource: "calls",
			Rate: engine.Rate{Limit: 2, Period: time.Second}}
	case 17:
		c.Op = OpCloseSession
	case 19:
		c.Op, c.Defaults = OpSetDefaults, &engine.Defaults{Caps: engine.Caps{Limits: map[string]int64{"gpu": int64(1 + w.rng.IntN(3))}}}
	case 20:
		c.Op, c.Name = OpResetRate, "calls"
	case 21:
		c.Op, c.Name, c.Amount = OpAdjustLimit, "gpu", int64(1+w.rng.IntN(3))
		c.Adapt = engine.Adapt{Samples: 10, Reason: "test"}
	case 22:
		c.Op, c.Session = OpConfigure, 0
		c.Settings = &engine.Settings{TombstoneTTL: time.Duration(1+w.rng.IntN(60)) * time.Second, NodeRetention: time.Minute,
			MaxScheduleWait: time.Second, KeyIdle: time.Duration(w.rng.IntN(10)) * time.Second}
	case 18:
		c.Op = OpClose
	case 13:
		c.Op, c.Name, c.Amount = OpSetQuota, "tokens", int64(w.rng.IntN(30))
		c.Value = &c.Amount
	case 23:
		c.Op, c.Name, c.Span = OpTryAcquire, "gpu", time.Duration(w.rng.IntN(5))*time.Second
	}
	return c
}

// learn keeps what the engine answered to command c at log index i.
func (w *workload) learn(c *Command, i uint64, r *Result) {
	switch {
	case errors.Is(r.Err, engine.ErrSessionEnded):
		w.sessions = slices.DeleteFunc(w.sessions, func(id engine.ID) bool { return id == c.Session })
	case errors.Is(r.Err, engine.ErrNodeEnded):
		w.nodes = slices.DeleteFunc(w.nodes, func(id engine.ID) bool { return id == c.Target && id != engine.RootID })
	}
	if r.Err != nil {
		return
	}
	switch {
	case c.Op == OpCreate || c.Op == OpEnsure && r.Created:
		w.nodes = append(w.nodes, r.Node.ID)
	case c.Op == OpOpenSession:
		w.sessions = append(w.sessions, r.Session.ID)
	case c.Op == OpAcquire && r.Waiter != nil:
		w.queued = append(w.queued, i)
	case c.Op == OpAcquire || c.Op == OpTryAcquire:
		w.leases = append(w.leases, r.Lease)
	}
}

// drive applies n commands of a workload to f, from log index first on,
// and returns their log form.
func drive(t testing.TB, f *FSM, w *workload, first uint64, n int) [][]byte {
	t.Helper()
	log := make([][]byte, 0, n)
	for i := range n {
		c := w.next(i)
		data := c.Encode()
		r := f.Apply(&raft.Log{Index: first + uint64(i), Type: raft.LogCommand, Data: data}).(*Result)
		w.learn(c, first+uint64(i), r)
		log = append(log, data)
	}
	return log
}

// feed applies a log to f from index first on.
func feed(f *FSM, first uint64, log [][]byte) {
	for i, data := range log {
		f.Apply(&raft.Log{Index: first + uint64(i), Type: raft.LogCommand, Data: data})
	}
}
