package daemon

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// slowBody sends a JSON Consume one byte per tick, counting what it sent.
type slowBody struct {
	data []byte
	tick time.Duration
	sent atomic.Int64
}

func (b *slowBody) Read(p []byte) (int, error) {
	i := b.sent.Load()
	if i == int64(len(b.data)) {
		return 0, http.ErrBodyReadAfterClose
	}
	time.Sleep(b.tick)
	p[0] = b.data[i]
	b.sent.Add(1)
	return 1, nil
}

// A client that sends its body one byte at a time is cut off at the body
// timeout, over HTTP/1.1 and over HTTP/2, long before its body is complete;
// and a long answer after a body sent in time is not cut off.
func TestSlowRequestBodyIsCutOff(t *testing.T) {
	const timeout = 500 * time.Millisecond
	d := startDaemon(t, testConfig(""), Options{BodyTimeout: timeout})
	msg := `{"resource":"http","amount":1,"request_id":"` + strings.Repeat("x", 100) + `"}`
	for name, client := range map[string]*http.Client{"HTTP/1.1": {}, "h2c": h2cClient()} {
		t.Run(name, func(t *testing.T) {
			body := &slowBody{data: []byte(msg), tick: 50 * time.Millisecond} // 6 s for the whole body
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
				d.URL()+"/governor.v1.GovernorService/Consume", body)
			must(t, err)
			req.ContentLength = int64(len(msg))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testTeamKey)
			began := time.Now()
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if err == nil && resp.StatusCode == http.StatusOK {
				t.Fatalf("the slow call succeeded after %s", time.Since(began))
			}
			if sent := body.sent.Load(); sent == int64(len(msg)) {
				t.Fatalf("the whole body was read (%d bytes in %s): not cut off", sent, time.Since(began))
			}
		})
	}

	// A watch stream outlives the body timeout on either protocol.
	ctx := context.Background()
	token, err := newJSONAPI(d.URL()).session(ctx, testTeamKey)
	must(t, err)
	for name, client := range map[string]governorv1connect.GovernorServiceClient{
		"Connect over HTTP/1.1": governorv1connect.NewGovernorServiceClient(&http.Client{}, d.URL()),
		"gRPC over h2c":         governorv1connect.NewGovernorServiceClient(h2cClient(), d.URL(), connect.WithGRPC()),
	} {
		t.Run(name, func(t *testing.T) {
			ens := connect.NewRequest(&governorv1.EnsureNodeRequest{Name: "watched-" + strings.ReplaceAll(name, " ", "-")})
			ens.Header().Set("Authorization", "Bearer "+token)
			node, err := client.EnsureNode(ctx, ens)
			must(t, err)
			watch := connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: node.Msg.Node.Id})
			watch.Header().Set("Authorization", "Bearer "+token)
			stream, err := client.WatchNode(ctx, watch)
			must(t, err)
			defer stream.Close()
			if !stream.Receive() {
				t.Fatalf("no first message: %v", stream.Err())
			}
			time.Sleep(3 * timeout)
			cancel := connect.NewRequest(&governorv1.CancelNodeRequest{NodeId: node.Msg.Node.Id})
			cancel.Header().Set("Authorization", "Bearer "+token)
			_, err = client.CancelNode(ctx, cancel)
			must(t, err)
			if !stream.Receive() || stream.Msg().State != governorv1.NodeState_NODE_STATE_CANCELLED {
				t.Fatalf("the stream did not outlive the body timeout: %v", stream.Err())
			}
		})
	}
}

// An Acquire that waits for a lease longer than the body timeout, its body
// read in time, gets its lease over HTTP/1.1, where the server reads the
// connection in the background once the body has ended.
func TestAcquireWaitsPastTheBodyTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	d := startDaemon(t, testConfig(""), Options{BodyTimeout: timeout})
	ctx := context.Background()
	token, err := newJSONAPI(d.URL()).session(ctx, testTeamKey)
	must(t, err)
	client := governorv1connect.NewGovernorServiceClient(&http.Client{}, d.URL())
	acquire := func() (*connect.Response[governorv1.AcquireResponse], error) {
		req := connect.NewRequest(&governorv1.AcquireRequest{Class: "db"})
		req.Header().Set("Authorization", "Bearer "+token)
		return client.Acquire(ctx, req)
	}
	var first uint64
	for i := range 4 { // team-a's limit on db
		res, err := acquire()
		must(t, err)
		if i == 0 {
			first = res.Msg.Lease.Id
		}
	}
	got := make(chan error, 1)
	go func() {
		_, err := acquire()
		got <- err
	}()
	time.Sleep(3 * timeout)
	rel := connect.NewRequest(&governorv1.ReleaseRequest{LeaseId: first})
	rel.Header().Set("Authorization", "Bearer "+token)
	_, err = client.Release(ctx, rel)
	must(t, err)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the waiting Acquire failed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting Acquire was not granted")
	}
}
