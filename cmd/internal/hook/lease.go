package hook

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// open opens this call's session, once. Its TTL is the wait for a slot
// plus the maximum hold, so it outlives an Acquire that waits (it sends no
// heartbeat) and whatever it holds ends by itself that long after the
// process stops; the lease itself ends at the maximum hold.
func (r *Runner) open(ctx context.Context) error {
	if r.token != "" {
		return nil
	}
	res, err := r.key.OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{
		Ttl: durationpb.New(r.opts.Wait + r.opts.MaxHold), ClientName: "governor hook --source " + string(r.opts.Source),
	}))
	if err != nil {
		return err
	}
	r.token = res.Msg.GetToken()
	return nil
}

// closeUnkept closes the session this call opened, unless it holds a lease
// that PostToolUse will release.
func (r *Runner) closeUnkept(ctx context.Context) {
	if r.token == "" || r.keep {
		return
	}
	_, _ = r.sess.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))
	r.token = ""
}

// acquire takes one tools lease on target for the tool about to run,
// waiting in the fair queue until ctx ends. A repeated PreToolUse for the
// same tool use finds the session of the first and gets the same lease.
func (r *Runner) acquire(ctx context.Context, target *governorv1.NodeInfo, in Input) error {
	id := in.RequestID(r.opts.Source)
	prev, ok, err := r.state.load(r.server, id)
	if err != nil {
		return err
	}
	if ok && r.opts.Now().Before(prev.Until) && prev.Token != r.token {
		r.closeUnkept(ctx)
		r.token = prev.Token
	}
	if err := r.open(ctx); err != nil {
		return err
	}
	until := r.opts.Now().Add(r.opts.MaxHold)
	res, err := r.sess.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{
		NodeId: target.GetId(), Class: ClassTools, MaxHold: durationpb.New(r.opts.MaxHold), RequestId: id,
	}))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || connect.CodeOf(err) == connect.CodeDeadlineExceeded {
			return &Refusal{Err: err, Message: prefix + "the run " + quote(in.RunName(r.opts.Source)) +
				" already runs as many tools at once as a " + ClassTools + " limit on it or its tenant allows, and none finished in time." +
				" Run fewer tools at once: wait for the running ones to finish, then try again."}
		}
		return r.refusal(err, "no more tools may run at once")
	}
	if hu := res.Msg.GetLease().GetHoldUntil(); hu != nil {
		until = hu.AsTime()
	}
	// Without its file PostToolUse could not release the lease: the
	// session is then closed, which releases it.
	if err := r.state.save(r.server, id, held{Token: r.token, Lease: res.Msg.GetLease().GetId(), Until: until}); err != nil {
		return err
	}
	r.keep = true
	r.state.sweep(r.opts.Now())
	return nil
}

// post releases the lease PreToolUse took for the tool, if it took one,
// and closes the session that held it. A lease that already ended by
// itself is fine, and so is a repeated release.
func (r *Runner) post(ctx context.Context, in Input) error {
	id := in.RequestID(r.opts.Source)
	h, ok, err := r.state.load(r.server, id)
	if err != nil || !ok {
		return err
	}
	r.token = h.Token
	_, err = r.sess.Release(ctx, connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: h.Lease}))
	if err != nil && !leaseGone(err) {
		return err
	}
	return r.state.remove(r.server, id)
}

// leaseGone reports an error that says the lease or its session has ended
// already, so there is nothing left to release.
func leaseGone(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeFailedPrecondition, connect.CodeUnauthenticated, connect.CodePermissionDenied:
		return true
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
