package daemon

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"governor.dev/governor"
	"governor.dev/governor/cmd/internal/linz"
)

// sdkTarget is linz.Target through the SDK, as a worker calls governord:
// one client, with every member's address, and one task whose quotas are
// the keys and whose limit of the class "slot" is the lease pool. Writes
// carry the request ids the linz clients choose; an acquire does not wait
// (NoWait), so a full pool is a denial. Reads alternate between the SDK,
// which asks the member it follows as the leader, and the JSON API of each
// member in turn, which must answer only as the leader or name the leader
// (asked next).
type sdkTarget struct {
	t       *testing.T
	c       *governor.Client
	ctx     context.Context // carries the task
	task    *governor.Task
	members []jsonAPI     // each member's API
	token   string        // a session of the tenant, for the members' API
	reads   atomic.Uint64 // reads made, to take turns

	mu     sync.Mutex                 // guards leases
	leases map[string]*governor.Lease // every lease granted, by id
}

var _ linz.Target = (*sdkTarget)(nil)

// newSDKTarget dials the cluster and creates the task, with cap on keys
// k0 to k<keys-1> and a pool of pool leases.
func newSDKTarget(t *testing.T, pc *procCluster, name string, keys int, cap, pool int64) *sdkTarget {
	t.Helper()
	quotas := make(map[string]int64)
	for k := range keys {
		quotas[fmt.Sprintf("k%d", k)] = cap
	}
	c := pc.dial(t)
	ctx, task := newTask(t, c, governor.Spec{Name: name, Quotas: quotas, Limits: map[string]int64{"slot": pool}})
	s := &sdkTarget{t: t, c: c, ctx: ctx, task: task, leases: make(map[string]*governor.Lease)}
	for _, a := range pc.apis {
		s.members = append(s.members, newJSONAPI("http://"+a))
	}
	token, err := newClusterAPI(pc.apis).session(t.Context(), testTeamKey)
	if err != nil {
		t.Fatal(err)
	}
	s.token = token
	return s
}

// within returns a context that carries the task and ends with ctx.
func (s *sdkTarget) within(ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(s.ctx)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return out, func() { stop(); cancel(nil) }
}

// write sorts the error of a call that changes state: an unknown outcome
// stays unknown, and an answer other than the call's result is a failure
// of the test, which took no effect.
func (s *sdkTarget) write(ctx context.Context, what string, err error) error {
	if errors.Is(err, governor.ErrOutcomeUnknown) || ctx.Err() != nil {
		return err
	}
	s.t.Errorf("%s: %v", what, err)
	return fmt.Errorf("%s: %w: %w", what, err, linz.ErrNotApplied)
}

func (s *sdkTarget) Consume(ctx context.Context, key string, n int64, requestID string) (bool, error) {
	ctx, done := s.within(ctx)
	defer done()
	_, err := governor.Consume(governor.WithRequestID(ctx, requestID), key, n)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, governor.ErrDenied):
		return false, nil
	}
	return false, s.write(ctx, "consume "+requestID, err)
}

// Read is the key's usage as the SDK's Describe reads it, or, every other
// time, as the next member's API answers GetNode, or else the leader it
// names. A read that failed took no effect.
func (s *sdkTarget) Read(ctx context.Context, key string) (int64, error) {
	turn := s.reads.Add(1)
	if turn%2 == 0 {
		n, err := s.c.Describe(ctx, s.task.ID())
		if err != nil {
			return 0, fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
		}
		return n.Resources[key].Used, nil
	}
	res, err := s.members[turn/2%uint64(len(s.members))].node(ctx, s.token, s.task.ID())
	var ce *callError
	if errors.As(err, &ce) && ce.Leader != "" {
		res, err = newJSONAPI("http://"+ce.Leader).node(ctx, s.token, s.task.ID())
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
	}
	return res[key].Used, nil
}

func (s *sdkTarget) Acquire(ctx context.Context, requestID string) (string, bool, error) {
	ctx, done := s.within(ctx)
	defer done()
	l, err := governor.Acquire(governor.WithRequestID(ctx, requestID), "slot", governor.NoWait())
	switch {
	case err == nil:
		id := strconv.FormatUint(l.ID, 10)
		s.mu.Lock()
		s.leases[id] = l
		s.mu.Unlock()
		return id, true, nil
	case errors.Is(err, governor.ErrDenied):
		return "", false, nil
	}
	return "", false, s.write(ctx, "acquire "+requestID, err)
}

func (s *sdkTarget) lease(id string) *governor.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leases[id]
}

// Release gives the lease back; the SDK repeats it, with one request id,
// for up to the session's TTL.
func (s *sdkTarget) Release(ctx context.Context, id string) (bool, error) {
	err := s.lease(id).Release(governor.Report{})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, governor.ErrLeaseLost):
		return false, nil
	}
	return false, s.write(ctx, "release "+id, err)
}

// Validate asks governord whether the lease is held. A validate that
// failed took no effect.
func (s *sdkTarget) Validate(ctx context.Context, id string) (bool, error) {
	err := s.lease(id).Validate(ctx)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, governor.ErrLeaseLost):
		return false, nil
	}
	return false, fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
}
