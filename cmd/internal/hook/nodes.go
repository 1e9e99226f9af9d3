package hook

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"governor.dev/governor/cmd/internal/engine"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// ensureRun finds or creates the run's node under the tenant. A new run
// takes the tenant's defaults; a budget flag fills only a cap the defaults
// leave out, which takes reading the defaults first, over a session. The run
// asks governord to keep it for the TTL once it has ended, whatever its
// retention.nodes: a cancelled or expired run found by a resumed session is
// then refused, not started anew with a fresh budget.
func (r *Runner) ensureRun(ctx context.Context, in Input) (*governorv1.NodeInfo, error) {
	spec := &governorv1.NodeSpec{
		Deadline:  timestamppb.New(r.opts.Now().Add(r.opts.TTL)),
		Retention: durationpb.New(min(r.opts.TTL, engine.MaxRetention)),
	}
	b := r.opts.Budgets
	if b.ToolCalls > 0 || b.Agents > 0 || b.MaxConcurrentTools > 0 {
		defaults, err := r.tenantDefaults(ctx)
		if err != nil {
			return nil, err
		}
		spec.Quotas = gaps(defaults.GetQuotas(), map[string]int64{ResourceToolCalls: b.ToolCalls, ResourceAgents: b.Agents})
		spec.Limits = gaps(defaults.GetLimits(), map[string]int64{ClassTools: b.MaxConcurrentTools})
	}
	res, err := r.key.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{
		Name: in.RunName(r.opts.Source), Spec: spec,
	}))
	if err != nil {
		return nil, err
	}
	run := res.Msg.GetNode()
	if run.GetDepth() < 2 {
		return nil, Blocked("GOVERNOR_API_KEY holds the admin key, whose scope is the root; the hook needs a tenant's key, so that runs count against a tenant.", nil)
	}
	if run.GetState() != governorv1.NodeState_NODE_STATE_ACTIVE {
		return nil, ended("run", run)
	}
	return run, nil
}

// ensureAgent finds or creates a subagent's node under its run, charging
// the run one agents unit in the same step when it creates it. The tool
// call's own unit is charged after, in another step: when that one refuses,
// the subagent stays created and charged (README, and
// TestHookSubagentRefusedAtItsFirstCallKeepsItsAgentsUnit). The run's
// defaults (the tenant's defaults for children) come first; the flag fills
// a gap in them.
func (r *Runner) ensureAgent(ctx context.Context, run *governorv1.NodeInfo, in Input) (*governorv1.NodeInfo, error) {
	spec := &governorv1.NodeSpec{
		Quotas: gaps(run.GetDefaults().GetQuotas(), map[string]int64{ResourceToolCalls: r.opts.Budgets.AgentToolCalls}),
	}
	res, err := r.key.EnsureNode(ctx, connect.NewRequest(&governorv1.EnsureNodeRequest{
		ParentId: run.GetId(), Name: in.AgentID, Spec: spec,
		Charge: &governorv1.Charge{Resource: ResourceAgents, Amount: 1},
	}))
	if err != nil {
		return nil, r.refusal(err, "no more subagents may start in this run")
	}
	agent := res.Msg.GetNode()
	if agent.GetState() != governorv1.NodeState_NODE_STATE_ACTIVE {
		return nil, ended("subagent", agent)
	}
	return agent, nil
}

// tenantDefaults reads the defaults of the key's tenant, which takes a
// session.
func (r *Runner) tenantDefaults(ctx context.Context) (*governorv1.Defaults, error) {
	if err := r.open(ctx); err != nil {
		return nil, err
	}
	res, err := r.sess.GetNode(ctx, connect.NewRequest(&governorv1.GetNodeRequest{}))
	if err != nil {
		return nil, err
	}
	return res.Msg.GetNode().GetDefaults(), nil
}

// gaps returns the flags' caps that defaults do not name.
func gaps(defaults, flags map[string]int64) map[string]int64 {
	var out map[string]int64
	for name, v := range flags {
		if _, named := defaults[name]; v <= 0 || named {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[name] = v
	}
	return out
}
