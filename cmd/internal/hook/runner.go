package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"connectrpc.com/connect"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// Names of what a run is budgeted in.
const (
	// ResourceToolCalls is charged one unit per tool call.
	ResourceToolCalls = "tool_calls"
	// ResourceAgents is charged one unit per subagent of a run.
	ResourceAgents = "agents"
	// ClassTools is the concurrency class a tool holds a lease of while it
	// runs, when the run has a limit on it.
	ClassTools = "tools"
)

// Budgets are the caps the flags give a new run and its subagents where the
// tenant's defaults name none. Zero means no flag.
type Budgets struct {
	ToolCalls          int64 // --tool-calls: a run's tool calls
	Agents             int64 // --agents: a run's subagents
	AgentToolCalls     int64 // --agent-tool-calls: each subagent's tool calls
	MaxConcurrentTools int64 // --max-concurrent-tools: a run's tools at once
}

// Options configure a Runner.
type Options struct {
	Source  Source
	Budgets Budgets
	// TTL is how long after its first tool call a run is refused everything.
	TTL time.Duration
	// MaxHold bounds how long a tool's lease, and the session holding it,
	// outlive a PostToolUse that never comes.
	MaxHold time.Duration
	// Wait is the longest a PreToolUse waits for a free tools slot (the
	// command's --timeout). The session holding the lease lives Wait plus
	// MaxHold, so it outlives the wait: it sends no heartbeat.
	Wait time.Duration
	// StateDir keeps the lease files between PreToolUse and PostToolUse.
	StateDir string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Runner decides one hook call. It is used once, by one goroutine.
type Runner struct {
	opts   Options
	server string                                  // governord's URLs: what held leases are kept under
	key    governorv1connect.GovernorServiceClient // calls made with the API key itself
	sess   governorv1connect.GovernorServiceClient // calls made with token
	state  stateDir

	token string // the session opened for this call, if any
	keep  bool   // the session holds a lease PostToolUse releases
}

// New returns a Runner that reaches governord as conn says.
func New(conn clientconn.Config, opts Options) (*Runner, error) {
	if conn.APIKey == "" {
		return nil, fmt.Errorf("%w: %s is not set; it must hold the tenant's API key", clientconn.ErrConfig, clientconn.EnvAPIKey)
	}
	urls, err := conn.URLs()
	if err != nil {
		return nil, err
	}
	hc, err := conn.Client()
	if err != nil {
		return nil, err
	}
	conn.HTTPClient = hc
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Runner{opts: opts, server: strings.Join(urls, ","), state: stateDir(opts.StateDir)}
	if r.key, err = conn.API(nil); err != nil {
		return nil, err
	}
	if r.sess, err = conn.API(func() string { return r.token }); err != nil {
		return nil, err
	}
	return r, nil
}

// Run decides one payload: nil allows the tool, an error refuses it (see
// Explain). cleanup bounds the closing of a session the call opened and
// does not keep, after ctx has ended.
func (r *Runner) Run(ctx, cleanup context.Context, in Input) error {
	defer r.closeUnkept(cleanup)
	if in.Event == PostToolUse {
		return r.post(ctx, in)
	}
	return r.pre(ctx, in)
}

func (r *Runner) pre(ctx context.Context, in Input) error {
	run, err := r.ensureRun(ctx, in)
	if err != nil {
		return err
	}
	target := run
	if in.AgentID != "" {
		if target, err = r.ensureAgent(ctx, run, in); err != nil {
			return err
		}
	}
	if c := run.GetClasses()[ClassTools]; c != nil && c.Limit != nil {
		if err := r.acquire(ctx, target, in); err != nil {
			return err
		}
	}
	_, err = r.key.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{
		NodeId: target.GetId(), Resource: ResourceToolCalls, Amount: 1, RequestId: in.RequestID(r.opts.Source),
	}))
	if err != nil {
		r.keep = false
		_ = r.state.remove(r.server, in.RequestID(r.opts.Source))
		return r.refusal(err, "no more tool calls may run")
	}
	return nil
}

// refusal explains a failed call, naming the budget when one was spent.
func (r *Runner) refusal(err error, what string) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		if d := denied(ce, what); d != nil {
			return d
		}
	}
	return err
}
