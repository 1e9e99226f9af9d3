package governor

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// lateTransport delays the answer to the first heartbeat by late and
// holds every later one until its context ends.
type lateTransport struct {
	base  http.RoundTripper
	late  time.Duration
	beats atomic.Int64
}

func (l *lateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/Heartbeat") {
		return l.base.RoundTrip(req)
	}
	if l.beats.Add(1) > 1 {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	resp, err := l.base.RoundTrip(req)
	time.Sleep(l.late)
	return resp, err
}

// A heartbeat answered 40% of the TTL late renews the session from when
// it was sent, as governord does from when it got it: the client gives
// the session up 80% of the TTL after the send, while governord still
// holds it, and not 80% after the late answer, when governord has ended it.
func TestALateHeartbeatCountsFromItsSend(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	const ttl = 3 * time.Second // the late answer comes 200ms before the give-up; governord ends the session 600ms after it
	ct := &countingTransport{}
	h2cClient(ct)
	lt := &lateTransport{base: ct.base, late: ttl * 4 / 10}
	c := dial(t, g.addr, WithHTTPClient(&http.Client{Transport: lt}), WithSessionTTL(ttl))
	ctx, _ := task(t, c, Spec{Name: "late"})
	lease, err := Acquire(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if err := done(t, ctx, 3*ttl); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("the task ended with %v, want ErrSessionLost", err)
	}
	if lt.beats.Load() < 2 {
		t.Fatal("the session was given up before the late heartbeat was answered")
	}
	if !leaseValid(t, g.addr, lease.ID) {
		t.Fatal("governord had ended the session before the client gave it up: the late answer counted from its arrival")
	}
}
