package adaptive

import (
	"context"
	"time"
)

// Start sets Initial on every class the root has no limit on yet, then starts
// the goroutine that decides for each class once per its Interval. A class
// whose initial limit could not be set is logged and tried again at its next
// decision. Start on a running controller does nothing.
func (c *Controller) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, name := range c.order {
		cl := c.classes[name]
		cl.step.Lock()
		_, limited, err := c.rootLimit(name)
		if err == nil && !limited {
			_, err = c.initLocked(ctx, cl)
		}
		cl.step.Unlock()
		if err != nil {
			c.log.Warn("adaptive initial limit not set", "class", name, "err", err)
		}
	}
	c.cancel, c.done = cancel, make(chan struct{})
	go c.run(ctx, c.done)
}

// Stop ends the goroutine and returns once it has returned; a decision in
// flight is abandoned at its wait for the record. Stop on a stopped
// controller does nothing; a stopped controller may be started again.
func (c *Controller) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		return
	}
	c.cancel()
	<-c.done
	c.cancel, c.done = nil, nil
}

// run decides for each class when its interval has passed, until ctx ends.
func (c *Controller) run(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	if len(c.order) == 0 {
		<-ctx.Done()
		return
	}
	due := make([]time.Time, len(c.order))
	start := time.Now()
	for i, name := range c.order {
		due[i] = start.Add(c.classes[name].Interval)
	}
	timer := time.NewTimer(time.Until(earliest(due)))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-timer.C:
			for i, name := range c.order {
				if !now.Before(due[i]) {
					c.stepLogged(ctx, name)
					due[i] = now.Add(c.classes[name].Interval)
				}
			}
			timer.Reset(time.Until(earliest(due)))
		}
	}
}

// stepLogged makes one decision; a failure is logged, and the next decision
// tries again. A failed commit also stops the daemon through the store.
func (c *Controller) stepLogged(ctx context.Context, name string) {
	if _, err := c.step(ctx, name); err != nil && ctx.Err() == nil {
		c.log.Warn("adaptive decision failed", "class", name, "err", err)
	}
}

func earliest(ts []time.Time) time.Time {
	e := ts[0]
	for _, t := range ts[1:] {
		if t.Before(e) {
			e = t
		}
	}
	return e
}
