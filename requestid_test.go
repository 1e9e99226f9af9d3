package governor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// recordingTransport keeps the request id of every call that changes
// state, and loses the replies to the calls named in lose after governord
// has applied them, as many as lose counts.
type recordingTransport struct {
	base  http.RoundTripper
	mu    sync.Mutex
	ids   map[string][]string // call name to the request ids it carried
	waits []time.Duration     // the max_wait of each Consume
	lose  map[string]int
}

// newRecordingTransport records over HTTP/2 in clear text and loses no
// reply yet.
func newRecordingTransport() *recordingTransport {
	ct := &countingTransport{}
	h2cClient(ct)
	return &recordingTransport{base: ct.base, ids: map[string][]string{}, lose: map[string]int{}}
}

// loseNext loses the reply to the next call named name.
func (r *recordingTransport) loseNext(name string) { r.loseReplies(name, 1) }

// loseReplies loses the replies to the next n calls named name; 0 stops
// losing them.
func (r *recordingTransport) loseReplies(name string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lose[name] = n
}

// sent returns the request ids of the calls named name so far.
func (r *recordingTransport) sent(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids[name])
}

// consumes returns the request id and the max_wait of each Consume so far.
func (r *recordingTransport) consumes() ([]string, []time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids["Consume"]), slices.Clone(r.waits)
}

// idRequest is a request that carries a request id.
type idRequest interface {
	proto.Message
	GetRequestId() string
}

// stateChanging names the calls that change state and makes their
// request messages, to read the ids from their bodies.
var stateChanging = map[string]func() idRequest{
	"CreateNode": func() idRequest { return new(governorv1.CreateNodeRequest) },
	"Consume":    func() idRequest { return new(governorv1.ConsumeRequest) },
	"Acquire":    func() idRequest { return new(governorv1.AcquireRequest) },
	"Release":    func() idRequest { return new(governorv1.ReleaseRequest) },
	"CancelNode": func() idRequest { return new(governorv1.CancelNodeRequest) },
	"CloseNode":  func() idRequest { return new(governorv1.CloseNodeRequest) },
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	name := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	newMsg, ok := stateChanging[name]
	if !ok {
		return r.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	m := newMsg()
	if err := proto.Unmarshal(body, m); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.ids[name] = append(r.ids[name], m.GetRequestId())
	if c, ok := m.(*governorv1.ConsumeRequest); ok {
		r.waits = append(r.waits, c.MaxWait.AsDuration())
	}
	lose := r.lose[name] > 0
	if lose {
		r.lose[name]--
	}
	r.mu.Unlock()
	resp, err := r.base.RoundTrip(req)
	if err != nil || !lose {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return nil, errors.New("the reply was lost")
}

func TestEveryStateChangeCarriesARequestIDAndLostRepliesAreRetried(t *testing.T) {
	t.Parallel()
	g := newGovernord(t)
	rt := newRecordingTransport()
	rt.lose = map[string]int{"Release": 1, "CloseNode": 1}
	c := dial(t, g.addr, WithHTTPClient(&http.Client{Transport: rt}))

	ctx, tk, err := c.NewTask(context.Background(), Spec{Name: "ids", Quotas: map[string]int64{"http": 5}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Consume(ctx, "http", 2); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(ctx, "db")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(Report{}); err != nil {
		t.Fatalf("release whose first reply was lost: %v", err)
	}
	_, st, err := NewTask(ctx, Spec{Name: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Cancel("test"); err != nil {
		t.Fatal(err)
	}
	if err := tk.Close(); err != nil {
		t.Fatalf("close whose first reply was lost: %v", err)
	}

	seen := map[string]bool{}
	for name := range stateChanging {
		ids := rt.ids[name]
		if len(ids) == 0 {
			t.Errorf("no %s call was made", name)
		}
		for i, id := range ids {
			if id == "" {
				t.Errorf("%s call %d carried no request id", name, i)
			}
			retry := i > 0 && id == ids[i-1] // checked below
			if seen[id] && !retry {
				t.Errorf("%s reused request id %q", name, id)
			}
			seen[id] = true
		}
	}
	for _, name := range []string{"Release", "CloseNode"} {
		ids := rt.ids[name]
		if len(ids) != 2 || ids[0] != ids[1] {
			t.Errorf("%s after a lost reply: ids %q, want one retry with the same id", name, ids)
		}
	}
	// The lease was released once, by the first call, and the retry was
	// answered from the request id: the slot is free.
	if leaseValid(t, g.addr, l.ID) {
		t.Fatal("the lease is still held")
	}
	if u := used(t, g.addr, tk.ID(), "http"); u != 2 {
		t.Fatalf("%d http used, want 2", u)
	}
}
