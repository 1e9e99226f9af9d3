package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// follower answers every call it serves as a node that is not the leader.
type follower struct {
	governorv1connect.UnimplementedGovernorServiceHandler
	leader string
}

func (f follower) Heartbeat(context.Context, *connect.Request[governorv1.HeartbeatRequest]) (*connect.Response[governorv1.HeartbeatResponse], error) {
	return nil, NotLeader(f.leader)
}

func (f follower) WatchNode(context.Context, *connect.Request[governorv1.WatchNodeRequest], *connect.ServerStream[governorv1.WatchNodeResponse]) error {
	return NotLeader(f.leader)
}

func serveFollower(t *testing.T, leader string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(governorv1connect.NewGovernorServiceHandler(follower{leader: leader}))
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// The not-leader answer reaches a client of every protocol as
// Unavailable with the leader's address in the governor-leader metadata,
// on unary calls and on streams; without a leader, the metadata is absent.
// Either way, governor-not-applied says nothing was applied.
func TestNotLeaderOnTheWire(t *testing.T) {
	const leader = "10.1.2.3:7600"
	for _, known := range []string{leader, ""} {
		srv := serveFollower(t, known)
		for _, p := range []struct {
			name string
			opts []connect.ClientOption
		}{
			{"connect", nil},
			{"connect json", []connect.ClientOption{connect.WithProtoJSON()}},
			{"grpc", []connect.ClientOption{connect.WithGRPC()}},
			{"grpc-web", []connect.ClientOption{connect.WithGRPCWeb()}},
		} {
			api := governorv1connect.NewGovernorServiceClient(srv.Client(), srv.URL, p.opts...)
			_, err := api.Heartbeat(context.Background(), connect.NewRequest(&governorv1.HeartbeatRequest{}))
			checkNotLeader(t, p.name+" unary", known, err)
			stream, err := api.WatchNode(context.Background(), connect.NewRequest(&governorv1.WatchNodeRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			for stream.Receive() {
				t.Fatalf("%s: a message from a follower's stream", p.name)
			}
			checkNotLeader(t, p.name+" stream", known, stream.Err())
			_ = stream.Close()
		}
	}
}

func checkNotLeader(t *testing.T, what, leader string, err error) {
	t.Helper()
	if connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("%s: %v, want Unavailable", what, err)
	}
	ce := err.(*connect.Error)
	if !connect.IsWireError(ce) || !strings.Contains(ce.Message(), "not its cluster's leader") {
		t.Fatalf("%s: %v, want the follower's answer saying it is not the leader", what, err)
	}
	if got := ce.Meta().Get("governor-leader"); got != leader {
		t.Fatalf("%s: governor-leader %q, want %q", what, got, leader)
	}
	if got := ce.Meta().Get("governor-not-applied"); got != "true" {
		t.Fatalf("%s: governor-not-applied %q, want true", what, got)
	}
	if leader != "" && !strings.Contains(ce.Message(), leader) {
		t.Fatalf("%s: message %q does not name the leader", what, ce.Message())
	}
}

// Plain JSON over HTTP, as curl sends it, gets 503 with the leader in a
// Governor-Leader header.
func TestNotLeaderOverPlainJSON(t *testing.T) {
	srv := serveFollower(t, "10.1.2.3:7600")
	res, err := srv.Client().Post(srv.URL+governorv1connect.GovernorServiceHeartbeatProcedure, "application/json", bytes.NewBufferString("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Governor-Leader") != "10.1.2.3:7600" ||
		!strings.Contains(string(body), `"code":"unavailable"`) || !strings.Contains(string(body), "The leader is at 10.1.2.3:7600") {
		t.Fatalf("plain JSON: %d %v %s; want 503, Governor-Leader and a JSON error naming the leader", res.StatusCode, res.Header, body)
	}
}
