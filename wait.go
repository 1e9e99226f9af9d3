package governor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// DefaultWait bounds a Wait whose context has no deadline: it waits at
// most this long from the call.
const DefaultWait = time.Minute

// maxWireWait is the longest max_wait governord accepts.
const maxWireWait = 24 * time.Hour

// Wait spends n units of resource on the task ctx carries, as Consume
// does, but when the chain's rate caps cannot admit them now it waits for
// room until ctx's deadline (or DefaultWait from the call, without one):
//
//   - governord books a slot on every rate cap of the chain and charges it
//     at once (scheduled admission); Wait sleeps until the slot and returns
//     a Balance whose Status is Scheduled. If ctx ends first, Wait returns
//     ctx's cause and the charge stays: the slot is the caller's whether
//     it is used or not.
//   - A refusal that no wait within the deadline cures is a *DeniedError,
//     returned at once and charged nothing; its RetryAfter says the wait
//     that would have been needed.
//   - A refusal that no wait at all cures (more than a burst, or a spent
//     quota) matches ErrNeverFits as well as ErrDenied.
//   - A refusal governord could not book although its wait fits the
//     deadline (a token bucket's window is full, or the wait is beyond
//     governord's booking ceiling, max_schedule_wait) is slept out and
//     asked again, uncharged meanwhile.
//
// A call governord does not answer is repeated with the same request id,
// so it is never booked twice, until the deadline passes or the task's
// context ends (as it does when the session is lost); then it is an
// *UnknownOutcomeError. n must be 1 or more.
func Wait(ctx context.Context, resource string, n int64) (Balance, error) {
	if n < 1 {
		return Balance{}, fmt.Errorf("%w: governor: wait for %s: n must be 1 or more, got %d; Consume(ctx, resource, 0) peeks", ErrInvalid, resource, n)
	}
	t, err := current(ctx)
	if err != nil {
		return Balance{}, err
	}
	until, ok := ctx.Deadline()
	if !ok {
		until = time.Now().Add(DefaultWait)
	}
	for {
		b, err := t.book(ctx, resource, n, until)
		var d *DeniedError
		switch {
		case err == nil:
			return b, sleepUntilSlot(ctx, resource, b)
		case !errors.As(err, &d) || d.NeverFits || d.RetryAfter <= 0 || time.Until(until) < d.RetryAfter:
			return Balance{}, err
		}
		if serr := clientconn.Sleep(ctx, d.RetryAfter); serr != nil {
			return Balance{}, fmt.Errorf("governor: wait for %s: %w", resource, serr)
		}
	}
}

// sleepUntilSlot sleeps until a scheduled balance's slot or ctx's end.
func sleepUntilSlot(ctx context.Context, resource string, b Balance) error {
	if b.Status != Scheduled {
		return nil
	}
	if err := clientconn.Sleep(ctx, b.RetryAfter); err != nil {
		return fmt.Errorf("governor: wait for %s: the slot stays charged: %w", resource, err)
	}
	return nil
}

// book asks governord once for n units within until, repeating the same
// request while governord does not answer, until until.
func (t *Task) book(ctx context.Context, resource string, n int64, until time.Time) (Balance, error) {
	id := t.c.ids.of(ctx)
	req := connect.NewRequest(&governorv1.ConsumeRequest{
		NodeId: t.id, Resource: resource, Amount: n, RequestId: id,
		MaxWait: durationpb.New(min(max(time.Until(until), 0), maxWireWait)),
	})
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	var res *connect.Response[governorv1.ConsumeResponse]
	err := t.s.send(ctx, "wait for "+resource, id, t.failed, func(ctx context.Context) (err error) {
		res, err = t.s.api.Consume(ctx, req)
		return err
	})
	if err != nil {
		return Balance{}, err
	}
	return balance(res.Msg), nil
}
