package cluster

import (
	"time"

	"governor.dev/governor/cmd/internal/engine"
)

// engineCalls is the part of the engine's surface a Node offers with the
// engine's own signatures, so a server can be written against either. (A
// Node's Abandon, Reap and SessionByToken also answer an error, which the
// engine's cannot fail with.)
type engineCalls interface {
	Create(c *engine.Call, parent engine.ID, spec engine.Spec) (engine.NodeInfo, error)
	Ensure(c *engine.Call, parent engine.ID, spec engine.Spec, charge *engine.Charge) (engine.NodeInfo, bool, error)
	Consume(c *engine.Call, id engine.ID, resource string, n int64) error
	ConsumeWith(c *engine.Call, id engine.ID, resource string, n int64, o engine.ConsumeOptions) (engine.ConsumeResult, error)
	ConsumeKeyed(c *engine.Call, k engine.KeyedLimit, n int64, o engine.ConsumeOptions) (engine.ConsumeResult, error)
	Cancel(c *engine.Call, id engine.ID) error
	Close(c *engine.Call, id engine.ID) error
	Acquire(c *engine.Call, id engine.ID, class string, maxHold time.Duration) (engine.LeaseInfo, *engine.Waiter, error)
	Release(c *engine.Call, id engine.ID, rep engine.Report) (engine.Outcome, error)
	OpenSession(c *engine.Call, scope engine.ID, ttl time.Duration, token [32]byte) (engine.SessionInfo, error)
	Heartbeat(c *engine.Call) (engine.SessionInfo, error)
	CloseSession(c *engine.Call) error
	SetQuota(c *engine.Call, id engine.ID, resource string, value *int64) error
	SetLimit(c *engine.Call, id engine.ID, class string, value *int64) error
	AdjustLimit(c *engine.Call, id engine.ID, class string, from *int64, to int64, why engine.Adapt) error
	SetDefaults(c *engine.Call, id engine.ID, d engine.Defaults) error
	SetRate(c *engine.Call, id engine.ID, resource string, rate *engine.Rate) error
	ResetRate(c *engine.Call, id engine.ID, resource string) error
	Configure(c *engine.Call, s engine.Settings) error
	SetBounds(cfg engine.BoundsConfig) error
	Describe(c *engine.Call, id engine.ID, page *engine.Page) (engine.NodeInfo, []engine.NodeInfo, engine.ID, error)
	Validate(c *engine.Call, id engine.ID) (engine.LeaseInfo, error)
	Explain(c *engine.Call, id engine.ID, name string, amount int64) (engine.Explanation, error)
}

var (
	_ engineCalls = (*engine.Engine)(nil)
	_ engineCalls = (*Node)(nil)
)
