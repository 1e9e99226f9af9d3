package cluster

import "governor.dev/governor/cmd/internal/engine"

// SetQuota sets or removes a quota, as engine.Engine.SetQuota.
func (n *Node) SetQuota(c *engine.Call, id engine.ID, resource string, value *int64) error {
	_, _, err := n.apply(c, &Command{Op: OpSetQuota, Target: id, Name: resource, Value: value})
	return err
}

// SetLimit sets or removes a concurrency limit, as engine.Engine.SetLimit.
func (n *Node) SetLimit(c *engine.Call, id engine.ID, class string, value *int64) error {
	_, _, err := n.apply(c, &Command{Op: OpSetLimit, Target: id, Name: class, Value: value})
	return err
}

// AdjustLimit moves a limit if it still is from, as engine.Engine.AdjustLimit.
func (n *Node) AdjustLimit(c *engine.Call, id engine.ID, class string, from *int64, to int64, why engine.Adapt) error {
	_, _, err := n.apply(c, &Command{Op: OpAdjustLimit, Target: id, Name: class, Value: from, Amount: to, Adapt: why})
	return err
}

// SetDefaults sets what new children start with, as engine.Engine.SetDefaults.
func (n *Node) SetDefaults(c *engine.Call, id engine.ID, d engine.Defaults) error {
	_, _, err := n.apply(c, &Command{Op: OpSetDefaults, Target: id, Defaults: &d})
	return err
}

// SetRate sets or removes a rate cap, as engine.Engine.SetRate.
func (n *Node) SetRate(c *engine.Call, id engine.ID, resource string, rate *engine.Rate) error {
	_, _, err := n.apply(c, &Command{Op: OpSetRate, Target: id, Name: resource, Rate: rate})
	return err
}

// ResetRate fills a rate cap's bucket, as engine.Engine.ResetRate.
func (n *Node) ResetRate(c *engine.Call, id engine.ID, resource string) error {
	_, _, err := n.apply(c, &Command{Op: OpResetRate, Target: id, Name: resource})
	return err
}

// Configure records new settings, as engine.Engine.Configure.
func (n *Node) Configure(c *engine.Call, s engine.Settings) error {
	_, _, err := n.apply(c, &Command{Op: OpConfigure, Settings: &s})
	return err
}

// SetBounds installs the tenants' limits, as engine.Engine.SetBounds.
func (n *Node) SetBounds(cfg engine.BoundsConfig) error {
	_, _, err := n.apply(nil, &Command{Op: OpSetBounds, Bounds: &cfg})
	return err
}
