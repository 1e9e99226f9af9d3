package governor

import (
	"context"

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

// Balance is what a granted Consume leaves.
type Balance struct {
	// Remaining is the smallest headroom left for the resource on the
	// task's chain, just after the charge. Meaningful when Capped.
	Remaining int64
	// Capped is false when no node on the chain caps the resource.
	Capped bool
}

// Consume spends n units of resource on the task ctx carries, checked
// against the task and every ancestor in one step. A refusal is a
// *DeniedError naming the cap that was hit and its largest consumer. The
// call carries a request id, so a lost reply is never charged twice.
func Consume(ctx context.Context, resource string, n int64) (Balance, error) {
	t, err := current(ctx)
	if err != nil {
		return Balance{}, err
	}
	res, err := t.c.api.Consume(ctx, connect.NewRequest(&governorv1.ConsumeRequest{
		NodeId: t.id, Resource: resource, Amount: n, RequestId: t.c.ids.next(),
	}))
	if err != nil {
		return Balance{}, t.failed(ctx, "consume", err)
	}
	if r := res.Msg.Remaining; r != nil {
		return Balance{Remaining: *r, Capped: true}, nil
	}
	return Balance{}, nil
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
	err = t.c.called(ctx, what, err)
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
