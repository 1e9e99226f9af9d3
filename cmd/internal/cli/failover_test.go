package cli_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/server"
	"governor.dev/governor/internal/clientconn"
)

// The hook and the verbs, given a list whose first node is not the
// leader and whose other node is down, follow the leader that node names.
func TestAListStartingAtAFollowerReachesTheLeader(t *testing.T) {
	t.Parallel()
	d := startGovernord(t, testConfig(""))
	var refused atomic.Int64
	follower := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refused.Add(1)
		_ = connect.NewErrorWriter().Write(w, r, server.NotLeader(d.Addr().String()))
	}))
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	follower.Config.Protocols = &p
	follower.Start()
	t.Cleanup(follower.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	_ = ln.Close()

	list := strings.Join([]string{follower.Listener.Addr().String(), down}, ",")
	env := []string{clientconn.EnvAddr + "=" + list, clientconn.EnvAPIKey + "=" + teamAKey}
	pre := payload(t, "claude/pre_tool_use.json", "follow", "t1", "")
	mustContain(t, governor(t, env, pre, hookArgs("claude", t.TempDir())...), 0)
	mustContain(t, governor(t, env, nil, "describe"), 0, "claude:follow #", "tool_calls 1/3")
	if refused.Load() < 2 {
		t.Fatalf("the follower refused %d calls; the commands did not start at it", refused.Load())
	}
}
