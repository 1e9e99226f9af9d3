package bench

import (
	"context"
	"errors"
	"fmt"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// pool is what the noisy neighbour and the flooded tenants run on: a
// semaphore or governord. acquire returns the grant's place in the order of
// grants (a lease id is one).
type pool interface {
	acquire(ctx context.Context, tenant int) (uint64, error)
	release(ctx context.Context, tenant int, order uint64) error
	queued(ctx context.Context) (int, error)
}

// fifoPool is the semaphore as a pool: every tenant in one line.
type fifoPool struct{ f *fifo }

func (p fifoPool) acquire(context.Context, int) (uint64, error) { return p.f.acquire(), nil }
func (p fifoPool) release(context.Context, int, uint64) error   { p.f.release(); return nil }
func (p fifoPool) queued(context.Context) (int, error)          { return p.f.queued(), nil }

// governedPool is a pool of governord: a root limit on a class of its own,
// one tenant node per tenant, one session for all.
type governedPool struct {
	t       *target
	s       *session
	class   string
	tenants []uint64
}

var (
	_ pool = fifoPool{}
	_ pool = (*governedPool)(nil)
)

// newGovernedPool sets the root's limit on a new class to slots and makes
// the tenants.
func newGovernedPool(ctx context.Context, t *target, name string, slots, tenants int) (*governedPool, error) {
	s, err := t.session(ctx, sessionTTL)
	if err != nil {
		return nil, err
	}
	p := &governedPool{t: t, s: s, class: t.name(name)}
	limit := int64(slots)
	if err := s.setLimit(ctx, 1, p.class, &limit); err != nil {
		return nil, err
	}
	for i := range tenants {
		id, err := s.node(ctx, 1, &governorv1.NodeSpec{Name: t.name(name, fmt.Sprint("tenant", i))})
		if err != nil {
			return nil, err
		}
		p.tenants = append(p.tenants, id)
	}
	return p, nil
}

func (p *governedPool) acquire(ctx context.Context, tenant int) (uint64, error) {
	return p.s.acquire(ctx, p.tenants[tenant], p.class)
}

func (p *governedPool) release(ctx context.Context, _ int, lease uint64) error {
	return p.s.release(ctx, lease, 0, false)
}

func (p *governedPool) queued(ctx context.Context) (int, error) {
	return p.t.queued(ctx, p.class)
}

// close ends the tenants and the session and removes the root's limit, so
// that a governord at -addr is left as it was found.
func (p *governedPool) close(ctx context.Context) error {
	var errs []error
	for _, id := range p.tenants {
		errs = append(errs, p.s.cancel(ctx, id))
	}
	errs = append(errs, p.s.setLimit(ctx, 1, p.class, nil), p.s.close(ctx))
	return errors.Join(errs...)
}
