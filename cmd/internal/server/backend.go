package server

import (
	"context"
	"time"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
)

// Backend is what the server serves from: the engine's calls, made on a
// single node's engine or through a cluster's log, and the record an answer
// waits for. Each call has the engine method's meaning; Abandon and
// SessionByToken may fail, as a cluster member that is not the leader does.
type Backend interface {
	Create(c *engine.Call, parent engine.ID, spec engine.Spec) (engine.NodeInfo, error)
	Ensure(c *engine.Call, parent engine.ID, spec engine.Spec, charge *engine.Charge) (engine.NodeInfo, bool, error)
	ConsumeWith(c *engine.Call, id engine.ID, resource string, n int64, o engine.ConsumeOptions) (engine.ConsumeResult, error)
	ConsumeKeyed(c *engine.Call, k engine.KeyedLimit, n int64, o engine.ConsumeOptions) (engine.ConsumeResult, error)
	Cancel(c *engine.Call, id engine.ID) error
	Close(c *engine.Call, id engine.ID) error
	Acquire(c *engine.Call, id engine.ID, class string, maxHold time.Duration) (engine.LeaseInfo, *engine.Waiter, error)
	TryAcquire(c *engine.Call, id engine.ID, class string, maxHold time.Duration) (engine.LeaseInfo, error)
	Abandon(c *engine.Call, w *engine.Waiter) error
	Release(c *engine.Call, id engine.ID, rep engine.Report) (engine.Outcome, error)
	OpenSession(c *engine.Call, scope engine.ID, ttl time.Duration, token [32]byte) (engine.SessionInfo, error)
	Heartbeat(c *engine.Call) (engine.SessionInfo, error)
	CloseSession(c *engine.Call) error
	SessionByToken(token [32]byte) (engine.SessionInfo, bool, error)
	SetQuota(c *engine.Call, id engine.ID, resource string, value *int64) error
	SetLimit(c *engine.Call, id engine.ID, class string, value *int64) error
	SetDefaults(c *engine.Call, id engine.ID, d engine.Defaults) error
	SetRate(c *engine.Call, id engine.ID, resource string, rate *engine.Rate) error
	ResetRate(c *engine.Call, id engine.ID, resource string) error
	Describe(c *engine.Call, id engine.ID, page *engine.Page) (engine.NodeInfo, []engine.NodeInfo, engine.ID, error)
	Validate(c *engine.Call, id engine.ID) (engine.LeaseInfo, error)
	Explain(c *engine.Call, id engine.ID, name string, amount int64) (engine.Explanation, error)

	// Room waits for space before a mutating call: back-pressure that keeps
	// memory bounded under load.
	Room(ctx context.Context) error
	// Wait returns once event seq, which a call's answer may depend on, is
	// on record; an answer is given only then.
	Wait(ctx context.Context, seq uint64) error
	// Failed is closed once the record can take nothing more.
	Failed() <-chan struct{}
	// Local is this process's engine: the one watches and dumps read, and
	// whose watch slots bound the open streams. A cluster member's changes
	// when a snapshot replaces its replica's engine.
	Local() *engine.Engine
}

// Single is the Backend of a single governord: its engine, recorded by its
// durable store. Its answers wait for the store's writer.
func Single(st *durable.Store) Backend { return single{Engine: st.Engine, st: st} }

type single struct {
	*engine.Engine
	st *durable.Store
}

func (b single) Abandon(c *engine.Call, w *engine.Waiter) error {
	b.Engine.Abandon(c, w)
	return nil
}

func (b single) SessionByToken(token [32]byte) (engine.SessionInfo, bool, error) {
	info, ok := b.Engine.SessionByToken(token)
	return info, ok, nil
}

func (b single) Room(ctx context.Context) error             { return b.st.Room(ctx) }
func (b single) Wait(ctx context.Context, seq uint64) error { return b.st.Wait(ctx, seq) }
func (b single) Failed() <-chan struct{}                    { return b.st.Failed() }
func (b single) Local() *engine.Engine                      { return b.Engine }
