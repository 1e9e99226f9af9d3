package adaptive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"governor.dev/governor/cmd/internal/durable"
	"governor.dev/governor/cmd/internal/engine"
)

// Controller moves the root's limit of each configured class. Create it with
// New; the zero value is not usable. Its methods are safe for concurrent use.
type Controller struct {
	store   *durable.Store
	log     *slog.Logger
	classes map[string]*class // fixed by New, read without a lock
	order   []string          // class names, in the order given
	granted atomic.Uint64     // the largest lease id Observe has seen granted

	mu     sync.Mutex // guards the fields below; held by Start and Stop throughout
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine has returned; nil when stopped
}

// class is one controlled class: its settings, its reports and its decisions.
type class struct {
	Class
	win  window
	step sync.Mutex // serializes this class's decisions
}

// New returns a stopped controller for classes on store's engine. A class
// named twice keeps its last settings. A nil log means slog.Default().
func New(store *durable.Store, classes []Class, log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	c := &Controller{store: store, log: log, classes: make(map[string]*class, len(classes))}
	for _, cl := range classes {
		if _, dup := c.classes[cl.Name]; !dup {
			c.order = append(c.order, cl.Name)
		}
		c.classes[cl.Name] = &class{Class: cl.normalized()}
	}
	return c
}

// Observe takes the release reports out of events on record, in order. It is
// meant for the store's Committed hook: it never waits for a decision. A
// release without a session (a grant its waiter abandoned, handed straight
// back) reports nothing about the downstream and is not a sample. Neither is
// the release of a lease granted before the root's limit on its class last
// changed: it ran under the old limit, and counting it would cut a limit
// twice for one overload, where TCP too cuts its window once per round trip
// and not once per loss.
func (c *Controller) Observe(evs []*engine.Event) {
	for _, ev := range evs {
		switch ev.Kind {
		case engine.KindLeaseGranted:
			c.noteGrant(ev.Target)
		case engine.KindLimitSet:
			if cl := c.classes[ev.Name]; cl != nil && ev.Node == engine.RootID {
				cl.win.restart(engine.ID(c.granted.Load()))
			}
		case engine.KindLeaseReleased:
			if cl := c.classes[ev.Name]; cl != nil && ev.Session != 0 {
				cl.win.add(ev.Target, ev.Report)
			}
		}
	}
}

// noteGrant raises granted to id. Lease ids only grow, so the last grant
// seen is the largest.
func (c *Controller) noteGrant(id engine.ID) {
	for {
		old := c.granted.Load()
		if uint64(id) <= old || c.granted.CompareAndSwap(old, uint64(id)) {
			return
		}
	}
}

// Step makes one decision for class now and reports whether the limit moved.
// A root without a limit on the class gets Initial. Otherwise, with at least
// MinSamples reports since the last decision, the rule moves the limit (see
// the package comment) and the reports are used up; with fewer, they wait for
// the next decision. A change returns once it is on record.
func (c *Controller) Step(class string) (bool, error) {
	return c.step(context.Background(), class)
}

func (c *Controller) step(ctx context.Context, name string) (bool, error) {
	cl := c.classes[name]
	if cl == nil {
		return false, fmt.Errorf("step %q: %w", name, ErrUnknownClass)
	}
	cl.step.Lock()
	defer cl.step.Unlock()
	limit, limited, err := c.rootLimit(cl.Name)
	if err != nil {
		return false, err
	}
	if !limited {
		return c.initLocked(ctx, cl)
	}
	sum, ok := cl.win.take(cl.MinSamples)
	if !ok {
		return false, nil
	}
	next, why := decide(cl.Class, limit, sum)
	if next == limit {
		return false, nil
	}
	return c.set(ctx, name, &limit, next, why)
}

// initLocked gives the root the class's Initial limit after rootLimit found
// none, and reports whether it did. cl.step must be held.
func (c *Controller) initLocked(ctx context.Context, cl *class) (bool, error) {
	return c.set(ctx, cl.Name, nil, cl.Initial, engine.Adapt{Reason: ReasonInitial})
}

// rootLimit reads the root's limit on class.
func (c *Controller) rootLimit(class string) (int64, bool, error) {
	root, _, _, err := c.store.Engine.Describe(&engine.Call{}, engine.RootID, nil)
	if err != nil {
		return 0, false, fmt.Errorf("read the root's limit on %q: %w", class, err)
	}
	li := root.Limits[class]
	return li.Limit, li.Limited, nil
}

// set moves the root's limit on class from from (nil: none) to to as the
// daemon's own call, and returns once the change is on record. It reports
// false, changing nothing, when the limit is no longer from: an operator
// edited it after it was read, and the operator's value stands (its event
// restarts the class's window).
func (c *Controller) set(ctx context.Context, class string, from *int64, to int64, why engine.Adapt) (bool, error) {
	if err := c.store.Room(ctx); err != nil {
		return false, fmt.Errorf("set the limit on %q: %w", class, err)
	}
	call := &engine.Call{}
	err := c.store.Engine.AdjustLimit(call, engine.RootID, class, from, to, why)
	if werr := c.store.Wait(ctx, call.Seq); werr != nil {
		return false, fmt.Errorf("record the limit on %q: %w", class, werr)
	}
	if errors.Is(err, engine.ErrLimitChanged) {
		c.log.Info("adaptive limit left alone: it was changed since it was read", "class", class, "to", to)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("set the limit on %q: %w", class, err)
	}
	c.log.Info("adaptive limit moved", "class", class, "from", describeLimit(from), "to", to, "reason", why.Reason,
		"samples", why.Samples, "p95_ns", why.P95Nanos, "overload_share", why.OverloadShare)
	return true, nil
}

// describeLimit renders a limit that may be absent for the log.
func describeLimit(v *int64) any {
	if v == nil {
		return "none"
	}
	return *v
}
