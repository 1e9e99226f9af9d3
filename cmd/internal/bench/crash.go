package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// CrashResult is the worker crash: a worker holds every slot of a pool and
// dies.
type CrashResult struct {
	Slots         int           `json:"slots"`
	TTL           time.Duration `json:"ttl_ns"`
	HandedOnAfter time.Duration `json:"handed_on_after_ns"` // from the dead worker's last heartbeat to the other tenant's grant
	LateReleases  int           `json:"late_releases"`
	Refused       int           `json:"late_releases_refused"`
	RefusedWith   string        `json:"refused_with"` // the status code of the refusals
	DeadMaxLease  uint64        `json:"dead_worker_largest_lease"`
	SurvivorLease uint64        `json:"survivor_lease"`
}

func (r *CrashResult) Table() Table {
	larger := "no"
	if r.SurvivorLease > r.DeadMaxLease {
		larger = "yes"
	}
	return Table{
		Title:   fmt.Sprintf("Worker crash: a worker takes all %d slots of a pool on a %s session and dies", r.Slots, r.TTL),
		Columns: []string{"what happened", "measured"},
		Rows: [][]string{
			{"another tenant got the pool after", ms(r.HandedOnAfter)},
			{"late releases by the dead worker refused", fmt.Sprintf("%d of %d (%s)", r.Refused, r.LateReleases, r.RefusedWith)},
			{"survivor's lease id larger than every dead one", fmt.Sprintf("%s (%d > %d)", larger, r.SurvivorLease, r.DeadMaxLease)},
		},
		Notes: []string{fmt.Sprintf("The wait is the session's TTL plus at most one reap interval (%s in the governord the benchmark starts).", reapInterval)},
	}
}

func runCrash(ctx context.Context, e *env) (_ Result, err error) {
	sz := e.Sizes
	r := &CrashResult{Slots: sz.CrashSlots, TTL: sz.CrashTTL}
	t, err := e.governord(ctx, settings{})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	gp, err := newGovernedPool(ctx, t, "crash", sz.CrashSlots, 2)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, gp.close(context.WithoutCancel(ctx))) }()
	dead, err := t.session(ctx, sz.CrashTTL)
	if err != nil {
		return nil, err
	}
	var held []uint64
	for range sz.CrashSlots {
		id, err := dead.acquire(ctx, gp.tenants[0], gp.class)
		if err != nil {
			return nil, err
		}
		held = append(held, id)
		r.DeadMaxLease = max(r.DeadMaxLease, id)
	}
	// The worker's last sign of life; from here its session has one TTL.
	died := time.Now()
	if _, err := dead.api.Heartbeat(ctx, connect.NewRequest(&governorv1.HeartbeatRequest{})); err != nil {
		return nil, err
	}
	resp, err := gp.s.api.Acquire(ctx, connect.NewRequest(&governorv1.AcquireRequest{
		NodeId: gp.tenants[1], Class: gp.class, MaxHold: durationpb.New(time.Minute)}))
	if err != nil {
		return nil, fmt.Errorf("the survivor's acquire: %w", err)
	}
	r.HandedOnAfter = time.Since(died)
	r.SurvivorLease = resp.Msg.Lease.Id
	// The dead worker wakes up and returns what it thinks it holds.
	for _, id := range held {
		r.LateReleases++
		if err := dead.release(ctx, id, 0, false); err != nil {
			r.Refused++
			r.RefusedWith = connect.CodeOf(err).String()
		}
	}
	return r, gp.s.release(ctx, r.SurvivorLease, 0, false)
}
