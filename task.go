package governor

import (
	"context"
	"errors"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Spec describes a task to create. Caps it leaves out come from its
// parent's defaults on governord.
type Spec struct {
	// Name is the task's name, unique among its active siblings.
	Name string
	// Quotas caps resources for the task's whole subtree: name to units.
	Quotas map[string]int64
	// Limits caps concurrency for the task's whole subtree: class to leases.
	Limits map[string]int64
	// Rates caps resources with budgets that refill: name to rate.
	Rates map[string]Rate
	// Deadline, when set, ends the task as past its deadline; the
	// context's deadline is set to it too.
	Deadline time.Time
	// Priority orders the task's acquires among its tenant's: higher first.
	Priority int32
	// Weight is a tenant's share of the fair queue; ignored below tenants.
	Weight uint32
	// Detached keeps the task in governord's tree when this client's
	// session ends. Without it the task is owned by the session: when the
	// session is closed or lapses (the worker died), governord cancels the
	// task ("owner's session ended") and later removes it.
	Detached bool
}

func (s Spec) wire() *governorv1.NodeSpec {
	out := &governorv1.NodeSpec{Name: s.Name, Quotas: s.Quotas, Limits: s.Limits, Priority: s.Priority, Weight: s.Weight, Detached: s.Detached}
	if !s.Deadline.IsZero() {
		out.Deadline = timestamppb.New(s.Deadline)
	}
	if len(s.Rates) > 0 {
		out.Rates = make(map[string]*governorv1.Rate, len(s.Rates))
		for name, r := range s.Rates {
			out.Rates[name] = r.wire()
		}
	}
	return out
}

// Task is a node of governord's tree that this client created. Its
// context is cancelled when it ends for any reason: closed, cancelled
// (here, by an ancestor or by an operator), past its deadline, or its
// session lost; context.Cause then says which. Methods are safe for
// concurrent use.
type Task struct {
	c       *Client
	s       *session // the session that created it; the task ends with it
	id      uint64
	name    string
	ctx     context.Context
	cancel  context.CancelCauseFunc
	watched bool // guarded by c.mu: the current watch stream reported it
}

type taskKey struct{}

// taskOf returns the task ctx carries, or nil.
func taskOf(ctx context.Context) *Task {
	t, _ := ctx.Value(taskKey{}).(*Task)
	return t
}

// FromContext returns the task ctx carries, or nil.
func FromContext(ctx context.Context) *Task { return taskOf(ctx) }

// ID is the task's node id.
func (t *Task) ID() uint64 { return t.id }

// Name is the task's name.
func (t *Task) Name() string { return t.name }

// NewTask creates a task and returns a context that carries it. When ctx
// already carries a task of this client, the new task is its subtask;
// otherwise it is a child of the key's scope (its tenant). The create
// carries one request id over all its attempts, as Consume does, so a lost
// reply never creates the task twice.
func (c *Client) NewTask(ctx context.Context, spec Spec) (context.Context, *Task, error) {
	parent := uint64(0)
	if t := taskOf(ctx); t != nil && t.c == c {
		parent = t.id
	}
	return c.newTask(ctx, parent, spec)
}

// NewTask creates a subtask of the task ctx carries (ErrNoTask without
// one) and returns a context that carries it.
func NewTask(ctx context.Context, spec Spec) (context.Context, *Task, error) {
	t := taskOf(ctx)
	if t == nil {
		return ctx, nil, ErrNoTask
	}
	return t.c.newTask(ctx, t.id, spec)
}

func (c *Client) newTask(ctx context.Context, parent uint64, spec Spec) (context.Context, *Task, error) {
	if err := ctx.Err(); err != nil {
		return ctx, nil, context.Cause(ctx)
	}
	c.mu.Lock()
	s, lost := c.cur, c.lost
	if lost == nil {
		c.pending++
	}
	c.mu.Unlock()
	if lost != nil {
		return ctx, nil, lost
	}
	id := c.ids.of(ctx)
	req := connect.NewRequest(&governorv1.CreateNodeRequest{ParentId: parent, Spec: spec.wire(), RequestId: id})
	var res *connect.Response[governorv1.CreateNodeResponse]
	err := s.send(ctx, "create task", id, s.called, func(ctx context.Context) (err error) {
		res, err = s.api.CreateNode(ctx, req)
		return err
	})
	if err != nil {
		c.settled(0)
		return ctx, nil, err
	}
	t := &Task{c: c, s: s, id: res.Msg.Node.Id, name: spec.Name}
	tctx, cancel := context.WithCancelCause(context.WithValue(context.WithValue(ctx, taskKey{}, t), requestIDKey{}, ""))
	t.cancel = cancel
	t.ctx = tctx
	if !spec.Deadline.IsZero() {
		var stop context.CancelFunc
		t.ctx, stop = context.WithDeadlineCause(tctx, spec.Deadline, taskEnded(t.name, t.id, "past its deadline"))
		t.cancel = func(cause error) { cancel(cause); stop() }
	}
	c.register(t)
	context.AfterFunc(t.ctx, func() { c.forget(t) })
	return t.ctx, t, nil
}

// register makes t one of the client's tasks, unless it has ended already
// or its session has.
func (c *Client) register(t *Task) {
	c.mu.Lock()
	reason, ended := c.early[t.id]
	lost := c.lost
	if lost == nil && c.cur != t.s {
		lost = context.Cause(t.s.ctx) // lost before the new session opened
	}
	if !ended && lost == nil {
		t.watched = true
		c.tasks[t.id] = t
	}
	c.mu.Unlock()
	c.settled(t.id)
	switch {
	case lost != nil:
		t.cancel(lost)
	case ended:
		t.cancel(taskEnded(t.name, t.id, reason))
	}
}

// settled ends a NewTask call's wait between creation and registration.
func (c *Client) settled(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.early, id)
	if c.pending--; c.pending == 0 {
		clear(c.early)
	}
}

// forget drops a task whose context is done.
func (c *Client) forget(t *Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tasks[t.id] == t {
		delete(c.tasks, t.id)
	}
}

// end cancels the task's context with why.
func (t *Task) end(why error) { t.cancel(why) }

// Close ends the task as done on governord, and its active subtasks as
// cancelled, and cancels its context. Closing a task that has ended
// already returns nil. A transient failure is retried for up to one TTL.
func (t *Task) Close() error {
	err := t.finish("close task", func(ctx context.Context, id string) error {
		_, err := t.s.api.CloseNode(ctx, connect.NewRequest(&governorv1.CloseNodeRequest{NodeId: t.id, RequestId: id}))
		return err
	})
	t.end(taskEnded(t.name, t.id, "closed"))
	return err
}

// maxReason is the longest cancel reason governord takes, in bytes.
const maxReason = 1024

// Cancel ends the task and its subtasks as cancelled on governord, with a
// reason for governord's log (cut to its first 1024 bytes), and cancels
// its context.
func (t *Task) Cancel(reason string) error {
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "")
	}
	err := t.finish("cancel task", func(ctx context.Context, id string) error {
		_, err := t.s.api.CancelNode(ctx, connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: t.id, Reason: reason, RequestId: id}))
		return err
	})
	t.end(taskEnded(t.name, t.id, "cancelled"))
	return err
}

// finish makes a call that ends the task, with one request id over its
// retries; an ended task or a lost client is nothing to report.
func (t *Task) finish(what string, call func(ctx context.Context, id string) error) error {
	if t.s.ctx.Err() != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.s.ttl)
	defer cancel()
	id := t.c.ids.next()
	err := t.s.send(ctx, what, id, t.s.called, func(ctx context.Context) error { return call(ctx, id) })
	if errors.Is(err, ErrTaskEnded) || errors.Is(err, ErrSessionLost) {
		return nil
	}
	return err
}
