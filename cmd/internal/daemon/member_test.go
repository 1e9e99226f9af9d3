package daemon

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// Three members in this process: the configuration is seeded by the
// leader, calls through the leader are answered, and a member that does not
// lead answers every call Unavailable naming the leader's API address,
// applying nothing; WatchNode too, which the leader serves.
func TestMembersServeThroughTheLeader(t *testing.T) {
	files, apis := clusterFiles(t, t.TempDir(), 3)
	for _, f := range files {
		cfg, err := config.Load(f)
		must(t, err)
		startDaemon(t, cfg, Options{})
	}
	ctx := context.Background()
	c := newClusterAPI(apis)
	var node uint64
	must(t, c.try(ctx, func(a jsonAPI) (err error) {
		node, err = a.ensure(ctx, testTeamKey, "job")
		return err
	}))
	for range 10 {
		must(t, c.try(ctx, func(a jsonAPI) error { return a.consume(ctx, testTeamKey, node, "http", 1) }))
	}
	lead := c.leader(ctx)
	if lead < 0 {
		t.Fatal("no member answers as the leader")
	}
	for i, a := range c.apis {
		if i == lead {
			continue
		}
		err := a.consume(ctx, testTeamKey, node, "http", 5)
		var ce *callError
		if !errors.As(err, &ce) || ce.Code != "unavailable" || ce.Leader != apis[lead] {
			t.Errorf("member %d, not the leader, answered a consume with %v (leader %q), want unavailable naming %s", i, err, leaderOf(err), apis[lead])
		}
		if _, err := a.session(ctx, testTeamKey); leaderOf(err) != apis[lead] {
			t.Errorf("member %d, not the leader, answered OpenSession with %v, want unavailable naming %s", i, err, apis[lead])
		}
	}
	admin, err := c.apis[lead].session(ctx, testAdminKey)
	must(t, err)
	for i, a := range apis {
		first, err := firstWatched(ctx, a, admin, node)
		switch {
		case i == lead && (err != nil || first.GetNodeId() != node):
			t.Errorf("WatchNode on the leader: got %v, %v; want the node's current state", first, err)
		case i != lead && (connect.CodeOf(err) != connect.CodeUnavailable || leaderOf(err) != apis[lead]):
			t.Errorf("WatchNode on member %d, not the leader: got %v, want unavailable naming %s", i, err, apis[lead])
		}
	}
	res, err := c.apis[lead].node(ctx, admin, node)
	must(t, err)
	if res["http"].Used != 10 {
		t.Errorf("the leader has %d used, want the 10 acknowledged", res["http"].Used)
	}
}

// leaderOf is the leader hint of a refusal, from the JSON helpers or a
// Connect client.
func leaderOf(err error) string {
	var ce *callError
	if errors.As(err, &ce) {
		return ce.Leader
	}
	var cerr *connect.Error
	if errors.As(err, &cerr) {
		return cerr.Meta().Get(clientconn.LeaderHeader)
	}
	return ""
}

// firstWatched opens a WatchNode of node at api with a session token and
// returns its first message.
func firstWatched(ctx context.Context, api, token string, node uint64) (*governorv1.WatchNodeResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	req := connect.NewRequest(&governorv1.WatchNodeRequest{NodeId: node})
	req.Header().Set("Authorization", "Bearer "+token)
	watch, err := governorv1connect.NewGovernorServiceClient(&http.Client{Transport: tr}, "http://"+api).WatchNode(ctx, req)
	if err != nil {
		return nil, err
	}
	defer watch.Close()
	if !watch.Receive() {
		return nil, watch.Err()
	}
	return watch.Msg(), nil
}
