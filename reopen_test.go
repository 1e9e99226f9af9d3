package governor

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// cutTransport fails every new request at once while cut is set, as a
// network partition does.
type cutTransport struct {
	base http.RoundTripper
	cut  atomic.Bool
}

func (c *cutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		closeBody(req)
		return nil, errors.New("the network is cut")
	}
	return c.base.RoundTrip(req)
}

// A client whose session is lost to a partition longer than the TTL ends
// the tasks of that session, opens a new session by itself once the
// network is back, and new tasks work without a new Dial.
func TestALostSessionIsReopenedAndNewTasksWork(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	ct := &countingTransport{}
	h2cClient(ct)
	cut := &cutTransport{base: ct.base}
	const ttl = time.Second
	c := dial(t, g.addr, WithHTTPClient(&http.Client{Transport: cut}), WithSessionTTL(ttl))
	first := c.SessionID()
	old, _ := task(t, c, Spec{Name: "before", Quotas: map[string]int64{"http": 10}})
	lease, err := Acquire(old, "db")
	if err != nil {
		t.Fatal(err)
	}

	cut.cut.Store(true)
	if err := done(t, old, 2*ttl); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("the old task ended with %v, want ErrSessionLost", err)
	}
	if _, _, err := c.NewTask(context.Background(), Spec{Name: "during"}); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("new task while the session is being reopened: %v, want ErrSessionLost", err)
	}
	time.Sleep(ttl) // past the TTL: governord ends the old session too
	cut.cut.Store(false)

	for start := time.Now(); c.Err() != nil; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no new session 10s after the network came back: %v", c.Err())
		}
	}
	if c.SessionID() == first {
		t.Fatalf("the session id is still %d", first)
	}
	ctx, tk := task(t, c, Spec{Name: "after", Quotas: map[string]int64{"http": 10}})
	if b, err := Consume(ctx, "http", 2); err != nil || b.Remaining != 8 {
		t.Fatalf("consume in a task of the new session: %+v, %v", b, err)
	}
	l, err := Acquire(ctx, "db")
	if err != nil {
		t.Fatalf("acquire in a task of the new session: %v", err)
	}
	if err := l.Release(Report{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Consume(old, "http", 1); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("consume in a task of the lost session: %v, want ErrSessionLost", err)
	}
	if err := lease.Release(Report{}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("release of a lease of the lost session: %v, want ErrLeaseLost", err)
	}
	if err := tk.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close after a reopened session: %v", err)
	}
}
