package cluster

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
)

// stampClock is a replica's engine clock: it reads the time of the command
// being applied, so every replica's engine sees the same instant for the
// same command. Reads between commands see the last command's time.
type stampClock struct{ now atomic.Int64 }

func (c *stampClock) Now() time.Time { return time.Unix(0, c.now.Load()) }

// FSM is the engine as a raft.FSM: it applies each committed command to its
// engine at the command's stamped time. Apply, Snapshot and Restore run on
// raft's one FSM goroutine; Engine may be called from any goroutine.
type FSM struct {
	clock *stampClock
	eng   atomic.Pointer[engine.Engine]

	// Owned by the FSM goroutine.
	last     int64             // time of the last command applied; never goes back
	image    *engine.Image     // the last snapshot, kept up to date from captures
	sums     map[uint64]uint64 // checksums taken, by log index, until compared
	timeOf   func(c *Command, last int64) int64
	applying uint64    // log index of the command being applied
	feed     applyFeed // the engine's sink: hands applied events to a Fed (feed.go)

	mu       sync.Mutex // guards the fields below
	mismatch []Mismatch // checksums that differed from the leader's
	waiters  waiters    // queued acquires, by the log index of their Acquire
	members  members    // each member's API address, by id (members.go)
}

// Mismatch is one checksum of a replica that differed from the leader's.
type Mismatch struct {
	Index          uint64 // log index of the checksum command
	Mine, Leader   uint64
	AppliedAtIndex uint64 // log index of the compare command that found it
}

var _ raft.ConfigurationStore = (*FSM)(nil)

// NewFSM returns an FSM over a new, empty engine.
func NewFSM() *FSM {
	f := &FSM{clock: new(stampClock), waiters: newWaiters(), members: members{}, sums: make(map[uint64]uint64), timeOf: stampedTime}
	f.eng.Store(engine.New(engine.Options{Clock: f.clock, Sink: &f.feed}))
	f.image = engine.NewImage(nil)
	return f
}

// stampedTime is the time a command applies at: the leader's stamp, or the
// last command's time if the stamp is earlier (a new leader's clock may be
// behind the old one's).
func stampedTime(c *Command, last int64) int64 { return max(c.Now, last) }

// Engine returns the replica's engine. Its mutating calls must come only
// through the log; reads may be made at any time.
func (f *FSM) Engine() *engine.Engine { return f.eng.Load() }

// Mismatches returns the checksums of this replica that differed from the
// leader's, oldest first.
func (f *FSM) Mismatches() []Mismatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Mismatch(nil), f.mismatch...)
}

// Apply applies one committed command and returns its *Result. A command
// that cannot be read applies nothing and answers its error on every
// replica alike. After each command the replica takes every decision of
// time due by the command's time (engine.Engine.Tick), which not every call
// does (a call refused before it looks at the time does not): a read on the
// leader between two commands then finds nothing due and changes nothing
// its followers do not have. The command's events then go to the Fed set
// with Feed, if any. A batch applies each of its commands so, in order,
// and answers their results in Result.Batch.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	cmd, err := DecodeCommand(l.Data)
	if err != nil {
		return &Result{Err: err}
	}
	if cmd.Op != OpBatch {
		return f.applyOne(l.Index, cmd)
	}
	r := &Result{Batch: make([]*Result, len(cmd.Batch))}
	for i, sub := range cmd.Batch {
		r.Batch[i] = f.applyOne(l.Index, sub)
	}
	return r
}

// applyOne applies one command, not a batch, at its stamped time.
func (f *FSM) applyOne(index uint64, cmd *Command) *Result {
	f.last = f.timeOf(cmd, f.last)
	f.clock.now.Store(f.last)
	f.applying = index
	r := f.apply(index, cmd)
	e := f.Engine()
	e.Tick()
	f.feed.handOver(e)
	return r
}

func (f *FSM) apply(index uint64, cmd *Command) *Result {
	e := f.Engine()
	c := &engine.Call{Session: cmd.Session, Request: cmd.Request}
	r := &Result{}
	switch cmd.Op {
	case OpCreate:
		r.Node, r.Err = e.Create(c, cmd.Target, specOf(cmd))
	case OpEnsure:
		r.Node, r.Created, r.Err = e.Ensure(c, cmd.Target, specOf(cmd), cmd.Charge)
	case OpConsume:
		r.Err = e.Consume(c, cmd.Target, cmd.Name, cmd.Amount)
	case OpConsumeWith:
		r.Consume, r.Err = e.ConsumeWith(c, cmd.Target, cmd.Name, cmd.Amount, cmd.Options)
	case OpConsumeKeyed:
		r.Consume, r.Err = e.ConsumeKeyed(c, keyedOf(cmd), cmd.Amount, cmd.Options)
	case OpCancel:
		r.Err = e.Cancel(c, cmd.Target)
	case OpClose:
		r.Err = e.Close(c, cmd.Target)
	case OpAcquire:
		r.Lease, r.Waiter, r.Err = e.Acquire(c, cmd.Target, cmd.Name, cmd.Span)
		if r.Waiter != nil {
			f.keepWaiter(index, r.Waiter)
		}
	case OpTryAcquire:
		r.Lease, r.Err = e.TryAcquire(c, cmd.Target, cmd.Name, cmd.Span)
	case OpRelease:
		r.Outcome, r.Err = e.Release(c, cmd.Target, cmd.Report)
	case OpAbandon:
		if w := f.takeWaiter(cmd.Waiter); w != nil {
			e.Abandon(c, w)
		}
	default:
		f.applySession(e, c, cmd, r)
	}
	r.Seq = c.Seq
	return r
}

func (f *FSM) applySession(e *engine.Engine, c *engine.Call, cmd *Command, r *Result) {
	switch cmd.Op {
	case OpOpenSession:
		r.Session, r.Err = e.OpenSession(c, cmd.Target, cmd.Span, cmd.Token)
	case OpHeartbeat:
		r.Beats = make([]Beat, len(cmd.Renew))
		for i, s := range cmd.Renew {
			r.Beats[i].Session, r.Beats[i].Err = e.Heartbeat(&engine.Call{Session: s})
		}
	case OpCloseSession:
		r.Err = e.CloseSession(c)
	case OpReap:
		r.Reaped = e.Reap(c)
	case OpRevive:
		e.Revive()
	default:
		f.applyEdit(e, c, cmd, r)
	}
}

func (f *FSM) applyEdit(e *engine.Engine, c *engine.Call, cmd *Command, r *Result) {
	switch cmd.Op {
	case OpSetQuota:
		r.Err = e.SetQuota(c, cmd.Target, cmd.Name, cmd.Value)
	case OpSetLimit:
		r.Err = e.SetLimit(c, cmd.Target, cmd.Name, cmd.Value)
	case OpAdjustLimit:
		r.Err = e.AdjustLimit(c, cmd.Target, cmd.Name, cmd.Value, cmd.Amount, cmd.Adapt)
	case OpSetDefaults:
		r.Err = e.SetDefaults(c, cmd.Target, defaultsOf(cmd))
	case OpSetRate:
		r.Err = e.SetRate(c, cmd.Target, cmd.Name, cmd.Rate)
	case OpResetRate:
		r.Err = e.ResetRate(c, cmd.Target, cmd.Name)
	case OpConfigure:
		r.Err = e.Configure(c, settingsOf(cmd))
	case OpSetBounds:
		r.Err = e.SetBounds(boundsOf(cmd))
	case OpMember:
		f.setMember(raft.ServerID(cmd.Name), cmd.API)
	default:
		f.applyCheck(e, cmd, r)
	}
}

func specOf(c *Command) engine.Spec {
	if c.Spec == nil {
		return engine.Spec{}
	}
	return *c.Spec
}

func keyedOf(c *Command) engine.KeyedLimit {
	if c.Keyed == nil {
		return engine.KeyedLimit{}
	}
	return *c.Keyed
}

func defaultsOf(c *Command) engine.Defaults {
	if c.Defaults == nil {
		return engine.Defaults{}
	}
	return *c.Defaults
}

func settingsOf(c *Command) engine.Settings {
	if c.Settings == nil {
		return engine.Settings{}
	}
	return *c.Settings
}

func boundsOf(c *Command) engine.BoundsConfig {
	if c.Bounds == nil {
		return engine.BoundsConfig{}
	}
	return *c.Bounds
}
