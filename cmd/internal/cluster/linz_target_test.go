package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/engine"
	"governor.dev/governor/cmd/internal/linz"
)

// on makes one call on the member calls go to. An ErrNotLeader took no
// effect: the target moves to the member it names, or, when it names none,
// to the next member after a short pause that keeps clients from spinning.
func on[T any](ctx context.Context, t *nodeTarget, f func(n *Node) (T, error)) (T, error) {
	at := t.at.Load()
	v, err := f(t.c.nodes[at])
	var nl *ErrNotLeader
	if !errors.As(err, &nl) {
		return v, err
	}
	if i := t.c.index(nl.Leader); i >= 0 {
		t.at.CompareAndSwap(at, uint64(i))
	} else {
		t.at.CompareAndSwap(at, (at+1)%uint64(len(t.c.nodes)))
		pause(ctx)
	}
	return v, fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
}

// pause waits a moment, or until ctx ends.
func pause(ctx context.Context) {
	select {
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
	}
}

// index returns the index of the member whose API address is api, or -1.
func (c *faultCluster) index(api string) int {
	for i, a := range c.addrs {
		if string(a) == api {
			return i
		}
	}
	return -1
}

// settle sorts the error of a write: nil and ErrNotApplied pass; a command
// raft refused before it entered its queue took no effect; an unknown
// outcome stays unknown; any other error is a failure of the test.
func (t *nodeTarget) settle(err error) error {
	switch {
	case err == nil, errors.Is(err, linz.ErrNotApplied), errors.Is(err, ErrUnknownOutcome):
		return err
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
	}
	t.c.t.Errorf("a call failed unexpectedly: %v", err)
	return fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
}

func (t *nodeTarget) call(request string) *engine.Call {
	return &engine.Call{Session: t.c.session, Request: request}
}

func (t *nodeTarget) Consume(ctx context.Context, key string, n int64, requestID string) (bool, error) {
	_, err := on(ctx, t, func(m *Node) (struct{}, error) {
		return struct{}{}, m.Consume(t.call(requestID), t.c.quota, key, n)
	})
	if errors.Is(err, engine.ErrDenied) {
		return false, nil
	}
	return err == nil, t.settle(err)
}

func (t *nodeTarget) Read(ctx context.Context, key string) (int64, error) {
	info, err := t.describe(ctx)
	return info.Quotas[key].Used, err
}

// describe reads the node of the run as the target's read path does. A read
// that failed took no effect.
func (t *nodeTarget) describe(ctx context.Context) (engine.NodeInfo, error) {
	var info engine.NodeInfo
	var err error
	if e := t.replica(ctx); e != nil {
		info, _, _, err = e.Describe(&engine.Call{}, t.c.quota, nil)
		return info, replicaErr(err)
	} else if t.read != leaderRead {
		return info, fmt.Errorf("no leader: %w", linz.ErrNotApplied)
	} else {
		info, err = on(ctx, t, func(m *Node) (engine.NodeInfo, error) {
			info, _, _, err := m.Describe(&engine.Call{}, t.c.quota, nil)
			return info, err
		})
	}
	return info, t.settle(err)
}

// replicaErr is the error of a read from a replica's engine: a replica
// behind the leader may not know the run's session or node yet, and a read
// that failed took no effect.
func replicaErr(err error) error {
	if err != nil {
		return fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
	}
	return nil
}

// replica returns the engine a broken read path reads as it stands: the
// next member's in turn for anyRead, the leader's for leaderAsIs (nil,
// after a short pause, when none leads). It is nil for leaderRead.
func (t *nodeTarget) replica(ctx context.Context) *engine.Engine {
	switch t.read {
	case anyRead:
		return t.c.nodes[t.turn.Add(1)%uint64(len(t.c.nodes))].FSM().Engine()
	case leaderAsIs:
		if l := t.c.leader(); l >= 0 {
			return t.c.nodes[l].FSM().Engine()
		}
		pause(ctx)
	}
	return nil
}

// Acquire asks for a lease without waiting: the run's tenant has no free
// place in its queue (noQueue), so an acquire that finds the pool full is
// refused with a *BoundError, a denial.
func (t *nodeTarget) Acquire(ctx context.Context, requestID string) (string, bool, error) {
	type acquired struct {
		lease engine.LeaseInfo
		w     *engine.Waiter
	}
	a, err := on(ctx, t, func(m *Node) (acquired, error) {
		l, w, err := m.Acquire(t.call(requestID), t.c.quota, linzClass, 0)
		return acquired{l, w}, err
	})
	var be *engine.BoundError
	switch {
	case errors.As(err, &be) && be.Bound == engine.BoundQueued:
		return "", false, nil
	case err == nil && a.w != nil:
		t.c.t.Errorf("an acquire queued on a tenant whose queue is full")
		return "", false, nil
	}
	return strconv.FormatUint(uint64(a.lease.ID), 10), err == nil, t.settle(err)
}

func (t *nodeTarget) Release(ctx context.Context, id string) (bool, error) {
	lid, err := leaseID(id)
	if err != nil {
		return false, err
	}
	out, err := on(ctx, t, func(m *Node) (engine.Outcome, error) {
		return m.Release(t.call(""), lid, engine.Report{})
	})
	if isLeaseError(err) {
		return false, nil
	}
	return out == engine.OutcomeReleased, t.settle(err)
}

func (t *nodeTarget) Validate(ctx context.Context, id string) (bool, error) {
	lid, err := leaseID(id)
	if err != nil {
		return false, err
	}
	if e := t.replica(ctx); e != nil {
		_, err = e.Validate(t.call(""), lid)
		if !isLeaseError(err) {
			err = replicaErr(err)
		}
	} else if t.read != leaderRead {
		return false, fmt.Errorf("no leader: %w", linz.ErrNotApplied)
	} else {
		_, err = on(ctx, t, func(m *Node) (engine.LeaseInfo, error) { return m.Validate(t.call(""), lid) })
	}
	if isLeaseError(err) {
		return false, nil
	}
	return err == nil, t.settle(err)
}

func isLeaseError(err error) bool {
	var le *engine.LeaseError
	return errors.As(err, &le)
}

func leaseID(id string) (engine.ID, error) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("lease id %q is not a number: %w: %w", id, err, linz.ErrNotApplied)
	}
	return engine.ID(n), nil
}
