package governor

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lateTransport delays the answer to the first heartbeat by late, and
// holds every later one until its context ends. It records when the first
// was sent and the deadline the client gave the second: the instant the
// client gives the session up.
type lateTransport struct {
	base   http.RoundTripper
	late   time.Duration
	mu     sync.Mutex // guards the fields below
	beats  int
	sent   time.Time
	giveUp time.Time
}

func (l *lateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/Heartbeat") {
		return l.base.RoundTrip(req)
	}
	l.mu.Lock()
	l.beats++
	first := l.beats == 1
	if first {
		l.sent = time.Now()
	} else if l.beats == 2 {
		l.giveUp, _ = req.Context().Deadline()
	}
	l.mu.Unlock()
	if !first {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	resp, err := l.base.RoundTrip(req)
	time.Sleep(l.late)
	return resp, err
}

// A heartbeat answered 40% of the TTL late renews the session from when
// it was sent, as governord does from when it got it: the client gives the
// session up 80% of the TTL after the send, before governord's expiry, and
// not 80% after the late answer, past it.
func TestALateHeartbeatCountsFromItsSend(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	const ttl = 5 * time.Second // the late answer comes a third of a second before the client would give up without it
	ct := &countingTransport{}
	h2cClient(ct)
	lt := &lateTransport{base: ct.base, late: ttl * 4 / 10}
	c := dial(t, g.addr, WithHTTPClient(&http.Client{Transport: lt}), WithSessionTTL(ttl))
	ctx, _ := task(t, c, Spec{Name: "late"})
	if err := done(t, ctx, 3*ttl); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("the task ended with %v, want ErrSessionLost", err)
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.giveUp.IsZero() {
		t.Fatal("the session was given up before the late heartbeat was answered")
	}
	// governord renewed the session when it got the heartbeat, after it was
	// sent, so it ends the session no earlier than one TTL after the send.
	if after := lt.giveUp.Sub(lt.sent); after > ttl*8/10 {
		t.Fatalf("the client gives the session up %s after the late heartbeat was sent, want at most 80%% of the TTL (%s): it counted from the answer", after, ttl*8/10)
	}
}
