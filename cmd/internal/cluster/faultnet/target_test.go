package faultnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/linz"
)

// readMode is how raftTarget serves reads.
type readMode int

const (
	// linearizable reads on the leader: a barrier in this term, the read,
	// then a check that it still leads.
	linearizable readMode = iota
	// followerReads reads any member's state as it stands: broken on
	// purpose.
	followerReads
	// noBarrier reads the leader's state as it stands: broken on purpose.
	noBarrier
)

// raftTarget is linz.Target over a cluster of quotaFSM: writes are
// commands applied on the leader, reads follow the mode.
type raftTarget struct {
	c     *cluster
	mode  readMode
	turn  atomic.Uint64 // picks the member of a follower read
	limit time.Duration // bounds raft's waits
}

var _ linz.Target = (*raftTarget)(nil)

// leader returns the member that leads, or, after a short pause that keeps
// clients from spinning, an error that took no effect.
func (t *raftTarget) leader(ctx context.Context) (*node, error) {
	for _, n := range t.c.nodes {
		if n.raft.State() == raft.Leader {
			return n, nil
		}
	}
	select {
	case <-time.After(5 * time.Millisecond):
	case <-ctx.Done():
	}
	return nil, fmt.Errorf("no leader: %w", linz.ErrNotApplied)
}

// apply applies cmd on the leader. A command refused before it entered the
// log took no effect; any other failure leaves its outcome unknown.
func (t *raftTarget) apply(ctx context.Context, cmd command) (reply, error) {
	n, err := t.leader(ctx)
	if err != nil {
		return reply{}, err
	}
	data, err := json.Marshal(cmd)
	if err != nil {
		return reply{}, fmt.Errorf("encode: %w", linz.ErrNotApplied)
	}
	f := n.raft.Apply(data, t.limit)
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrEnqueueTimeout) {
			return reply{}, fmt.Errorf("%w: %w", err, linz.ErrNotApplied)
		}
		return reply{}, err
	}
	r, ok := f.Response().(reply)
	if !ok {
		return reply{}, fmt.Errorf("apply answered %v", f.Response())
	}
	return r, nil
}

// read reads the state of the member the mode picks.
func read[T any](ctx context.Context, t *raftTarget, get func(*quotaFSM) T) (T, error) {
	var zero T
	if t.mode == followerReads {
		n := t.c.nodes[t.turn.Add(1)%uint64(len(t.c.nodes))]
		return get(n.fsm.(*quotaFSM)), nil
	}
	n, err := t.leader(ctx)
	if err != nil {
		return zero, err
	}
	if t.mode == noBarrier {
		return get(n.fsm.(*quotaFSM)), nil
	}
	if err := n.raft.Barrier(t.limit).Error(); err != nil {
		return zero, fmt.Errorf("barrier: %w: %w", err, linz.ErrNotApplied)
	}
	v := get(n.fsm.(*quotaFSM))
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return zero, fmt.Errorf("verify leader: %w: %w", err, linz.ErrNotApplied)
	}
	return v, nil
}

func (t *raftTarget) Consume(ctx context.Context, key string, n int64, requestID string) (bool, error) {
	r, err := t.apply(ctx, command{Op: "consume", Key: key, N: n, RequestID: requestID})
	return r.OK, err
}

func (t *raftTarget) Read(ctx context.Context, key string) (int64, error) {
	return read(ctx, t, func(f *quotaFSM) int64 { return f.usage(key) })
}

func (t *raftTarget) Acquire(ctx context.Context, requestID string) (string, bool, error) {
	r, err := t.apply(ctx, command{Op: "acquire", RequestID: requestID})
	return r.ID, r.OK, err
}

func (t *raftTarget) Release(ctx context.Context, id string) (bool, error) {
	r, err := t.apply(ctx, command{Op: "release", ID: id})
	return r.OK, err
}

func (t *raftTarget) Validate(ctx context.Context, id string) (bool, error) {
	return read(ctx, t, func(f *quotaFSM) bool { return f.held(id) })
}
