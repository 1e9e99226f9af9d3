package governor

import (
	"context"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// Resources and classes the SDK's helpers charge and hold.
const (
	// ResourceHTTP is charged one unit per request by Transport.
	ResourceHTTP = "http"
	// ClassHTTP is held for each request by Transport.
	ClassHTTP = "http"
	// ResourceSQL is charged one unit per transaction by DB.Tx.
	ResourceSQL = "sql"
	// ClassDB is held for each transaction by DB.Tx.
	ClassDB = "db"
	// ResourceRetry is charged one unit per retry by Retry.
	ResourceRetry = "retry"
	// ClassAgents is the class of fan-out, for NewGroup.
	ClassAgents = "agents"
)

// Balance is what a granted Consume (or Wait) leaves on the task's chain,
// read at the tightest cap: the quota or rate cap with the least room.
type Balance struct {
	// Remaining is what the tightest cap still admits, just after the
	// charge. Meaningful when Capped.
	Remaining int64
	// Capped is false when no node on the chain caps the resource.
	Capped bool
	// Node is the id of the node whose cap is the tightest. Meaningful when
	// Capped.
	Node uint64
	// Limit is that cap's size: a quota's cap, a rate cap's burst.
	Limit int64
	// Rate says the tightest cap is a rate cap, which refills; false: a
	// quota, which never does.
	Rate bool
	// Reset is when the tightest cap is full again; zero for a quota.
	Reset time.Time
	// Status is Admitted, or Scheduled when the charge holds a slot
	// RetryAfter from governord's answer.
	Status Status
	// RetryAfter is, for Scheduled, the wait from the answer to the slot.
	RetryAfter time.Duration
}

// Status says how a charge was admitted.
type Status int

const (
	// Admitted: charged for now; act now.
	Admitted Status = iota
	// Scheduled: charged for a slot booked on the chain's rate caps; act
	// at the slot, without calling again. Wait sleeps until it.
	Scheduled
)

func (s Status) String() string {
	if s == Scheduled {
		return "scheduled"
	}
	return "admitted"
}

// balance reads a granted consume's answer.
func balance(m *governorv1.ConsumeResponse) Balance {
	var b Balance
	if r := m.Remaining; r != nil {
		b.Remaining, b.Capped = *r, true
		b.Node, b.Limit, b.Rate = m.CapNodeId, m.CapLimit, m.CapIsRate
	}
	if m.ResetTime != nil {
		b.Reset = m.ResetTime.AsTime()
	}
	if m.Status == governorv1.ConsumeStatus_CONSUME_STATUS_SCHEDULED {
		b.Status, b.RetryAfter = Scheduled, m.RetryAfter.AsDuration()
	}
	return b
}

// Consume spends n units of resource on the task ctx carries, checked
// against the task and every ancestor (quotas and rate caps) in one step,
// and returns the balance of the tightest cap. n of 0 is a peek: it
// charges nothing and returns the balance as it stands. A refusal is a
// *DeniedError naming the cap that was hit and its largest consumer, or,
// for a rate cap, what it admits now and the wait that would have been
// needed. The call carries one request id over all its attempts: one whose
// reply is lost is sent again until governord answers, and governord
// charges the id once, so a lost reply is never charged twice. Given up
// before an answer (ctx or the session ended), it is an
// *UnknownOutcomeError.
func Consume(ctx context.Context, resource string, n int64) (Balance, error) {
	t, err := current(ctx)
	if err != nil {
		return Balance{}, err
	}
	id := t.c.ids.of(ctx)
	req := connect.NewRequest(&governorv1.ConsumeRequest{NodeId: t.id, Resource: resource, Amount: n, RequestId: id})
	var res *connect.Response[governorv1.ConsumeResponse]
	err = t.s.send(ctx, "consume", id, t.failed, func(ctx context.Context) (err error) {
		res, err = t.s.api.Consume(ctx, req)
		return err
	})
	if err != nil {
		return Balance{}, err
	}
	return balance(res.Msg), nil
}

// current returns the live task ctx carries.
func current(ctx context.Context) (*Task, error) {
	t := taskOf(ctx)
	if t == nil {
		return nil, ErrNoTask
	}
	if err := t.c.live(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// failed maps the error of a call made for the task; a node that governord
// says has ended ends the task here too.
func (t *Task) failed(ctx context.Context, what string, err error) error {
	err = withExplain(t, t.s.called(ctx, what, err))
	if isNodeEnded(err) {
		t.end(taskEnded(t.name, t.id, "it has ended on governord"))
	}
	return err
}

// isNodeEnded says whether err is governord's answer about an ended node
// (not about a lease).
func isNodeEnded(err error) bool {
	ae, ok := err.(*apiError)
	return ok && ae.kind == ErrTaskEnded
}
