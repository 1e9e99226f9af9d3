package governor

import (
	"context"
	"sync"
	"time"
)

// Group runs functions as subtasks of the task in its context, each under
// a lease of its class, so fan-out is as wide as governord allows and no
// wider. The first error cancels the rest. Goroutines are bounded: one
// acquires leases in turn while functions are queued, and one runs each
// function that holds a lease. Use a Group once: Go, then Wait.
type Group struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	class  string
	wg     sync.WaitGroup

	mu        sync.Mutex // guards the fields below
	queue     []job
	acquiring bool  // the acquiring goroutine runs
	err       error // the first error
}

type job struct {
	spec Spec
	fn   func(context.Context) error
}

// NewGroup returns a group for the task ctx carries and a context that the
// group's first error cancels.
func NewGroup(ctx context.Context, class string) (*Group, context.Context) {
	gctx, cancel := context.WithCancelCause(ctx)
	return &Group{ctx: gctx, cancel: cancel, class: class}, gctx
}

// Go queues fn to run as a subtask described by spec once a lease of the
// group's class is granted to it. fn's context carries the subtask.
func (g *Group) Go(spec Spec, fn func(context.Context) error) {
	g.wg.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, job{spec: spec, fn: fn})
	if !g.acquiring {
		g.acquiring = true
		go g.acquire()
	}
}

// Wait waits for every function queued, and returns the first error.
func (g *Group) Wait() error {
	g.wg.Wait()
	g.cancel(nil)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// acquire starts the queued functions one by one as leases are granted,
// until the queue is empty.
func (g *Group) acquire() {
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.acquiring = false
			g.mu.Unlock()
			return
		}
		j := g.queue[0]
		g.queue = g.queue[1:]
		g.mu.Unlock()
		g.start(j)
	}
}

// start creates j's subtask and waits for its lease, then runs it on a
// goroutine of its own.
func (g *Group) start(j job) {
	if g.ctx.Err() != nil {
		g.fail(context.Cause(g.ctx))
		g.wg.Done()
		return
	}
	ctx, task, err := NewTask(g.ctx, j.spec)
	if err != nil {
		g.fail(err)
		g.wg.Done()
		return
	}
	lease, err := Acquire(ctx, g.class)
	if err != nil {
		_ = task.Cancel("its lease was not granted")
		g.fail(err)
		g.wg.Done()
		return
	}
	go g.run(ctx, task, lease, j.fn)
}

func (g *Group) run(ctx context.Context, task *Task, lease *Lease, fn func(context.Context) error) {
	defer g.wg.Done()
	start := time.Now()
	err := fn(ctx)
	rerr := lease.Release(Report{Latency: time.Since(start)})
	if err != nil {
		_ = task.Cancel(err.Error())
		g.fail(err)
		return
	}
	if cerr := task.Close(); cerr != nil {
		g.fail(cerr)
		return
	}
	if rerr != nil {
		g.fail(rerr)
	}
}

// fail keeps the first error and cancels the group.
func (g *Group) fail(err error) {
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.mu.Unlock()
	g.cancel(err)
}
