package governor

import (
	"errors"
	"testing"
	"time"
)

// ended waits for a lease's Done, at most within, and returns its Err.
func ended(t *testing.T, l *Lease, within time.Duration) error {
	t.Helper()
	select {
	case <-l.Done():
		return l.Err()
	case <-time.After(within):
		t.Fatalf("lease %d still open after %s", l.ID, within)
	}
	return nil
}

// Done is closed when the lease ends for any reason: released, maximum
// hold run out, revoked with its task, session lost; and not before.
func TestLeaseDoneClosesWhenTheLeaseEnds(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	c := dial(t, g.addr)
	ctx, _ := task(t, c, Spec{Name: "done", Limits: map[string]int64{"db": 5}})

	t.Run("released", func(t *testing.T) {
		l, err := Acquire(ctx, "db")
		if err != nil {
			t.Fatal(err)
		}
		if l.Err() != nil {
			t.Fatalf("a held lease says it ended: %v", l.Err())
		}
		if err := l.Release(Report{}); err != nil {
			t.Fatal(err)
		}
		if err := ended(t, l, time.Second); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("released: %v, want ErrLeaseLost", err)
		}
	})
	t.Run("maximum hold", func(t *testing.T) {
		l, err := Acquire(ctx, "db", WithMaxHold(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		held, err := Acquire(ctx, "db")
		if err != nil {
			t.Fatal(err)
		}
		if err := ended(t, l, 2*time.Second); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("held past its maximum: %v, want ErrLeaseLost", err)
		}
		select {
		case <-held.Done():
			t.Fatalf("a lease without a maximum hold ended: %v", held.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if err := held.Release(Report{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("revoked with its task", func(t *testing.T) {
		sub, st, err := NewTask(ctx, Spec{Name: "revoked"})
		if err != nil {
			t.Fatal(err)
		}
		l, err := Acquire(sub, "db")
		if err != nil {
			t.Fatal(err)
		}
		if err := adminCancel(t, g.addr, st.ID()); err != nil {
			t.Fatal(err)
		}
		if err := ended(t, l, 2*time.Second); !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrTaskEnded) {
			t.Fatalf("revoked: %v, want ErrLeaseLost and ErrTaskEnded", err)
		}
	})
	t.Run("session lost", func(t *testing.T) {
		rt := &countingTransport{}
		lc := dial(t, g.addr, WithHTTPClient(h2cClient(rt)), WithSessionTTL(time.Second))
		lctx, _ := task(t, lc, Spec{Name: "lost"})
		l, err := Acquire(lctx, "db")
		if err != nil {
			t.Fatal(err)
		}
		rt.block.Store(true)
		if err := ended(t, l, 2*time.Second); !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrSessionLost) {
			t.Fatalf("session lost: %v, want ErrLeaseLost and ErrSessionLost", err)
		}
	})
}
